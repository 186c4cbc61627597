import { registerBuiltinToolViews } from '@qilin-agent/client-ui-tool';
import { I18nProvider } from '@qilin-agent/i18n';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import type { TurnPage } from '@qilin-agent/protocol';
import { act, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useSyncExternalStore, type ReactElement } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { fixtureText, recordedSnapshot } from '../../../test-support/fixtures';
import { Conversation, registerConversationNodes } from './Conversation';
import { createToolCallHooks } from '@qilin-agent/client-ui-tool';
import { ConversationStore } from '@qilin-agent/protocol';
import type { AnswerRequest } from './Request';

function rawEvents(name: string): Record<string, unknown>[] {
  return fixtureText(`${name}.jsonl`)
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function renderModel(
  model: ConversationStore,
  answer?: AnswerRequest,
  locale: 'en' | 'zh-CN' = 'en',
) {
  const registry = new SlotRegistry();
  registerBuiltinToolViews({ slots: registry });
  registerConversationNodes(registry);
  const shared = { tool: createToolCallHooks(model) };
  const ui = (): ReactElement => (
    <I18nProvider locale={locale}>
      <SlotsProvider registry={registry} shared={shared}>
        <Conversation
          snapshot={model.getSnapshot()}
          cwd="/home/qilin/workspace"
          {...(answer === undefined ? {} : { answer })}
        />
      </SlotsProvider>
    </I18nProvider>
  );
  const result = render(ui());
  return { ...result, update: () => result.rerender(ui()) };
}

describe('Conversation', () => {
  it('renders prompts, text, every root call and how each turn ended', () => {
    const model = new ConversationStore();
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
    const model = new ConversationStore();
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
    const model = new ConversationStore();
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
    const model = new ConversationStore();
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
    const model = new ConversationStore();
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

  it('names the child a request of the parent came from, on the agent call, answerable there', async () => {
    const time = '2026-11-30T12:00:00.000Z';
    const presentation = { action: 'Run command', remark: 'cargo test' };
    const events = [
      { type: 'turn.started', seq: 1, time, turnId: 't1', prompt: 'explore' },
      { type: 'step.started', seq: 2, time, turnId: 't1', step: 1 },
      {
        type: 'tool.start',
        seq: 3,
        time,
        callId: 'agent_1',
        toolName: 'agent',
        caller: 'direct',
        arguments: { agent: 'explore', prompt: 'Run the tests.', description: 'Run the tests' },
        presentation: { action: 'Start agent', remark: 'explore' },
      },
      {
        type: 'agent.started',
        seq: 4,
        time,
        callId: 'agent_1',
        childSessionId: 'ses_child7',
        agent: 'explore',
        description: 'Run the tests',
        name: 'explorer-1',
        background: false,
      },
      {
        type: 'request.opened',
        seq: 5,
        time,
        requestId: 'req-c1',
        callId: 'agent_1',
        toolName: 'bash',
        ask: { kind: 'approval', reason: 'runs a command', presentation, arguments: {} },
        childSessionId: 'ses_child7',
        childName: 'explorer-1',
      },
    ];
    const model = new ConversationStore();
    model.push(events);
    // The agent call keeps running: only the child waits.
    const root = model.getSnapshot().tree.turns[0]?.items.find((item) => item.type === 'tool');
    expect(root?.type === 'tool' && root.node.phase).toBe('running');
    const answer = vi.fn<AnswerRequest>(async () => {});
    const view = renderModel(model, answer);
    const card = view.container.querySelector('[data-request-id="req-c1"]') as HTMLElement;
    expect(card.closest('[data-chat-call-id]')?.getAttribute('data-chat-call-id')).toBe('agent_1');
    expect(card).toHaveAttribute('data-request-child', 'explorer-1');
    expect(within(card).getByRole('heading')).toHaveTextContent(
      'Approval needed — from explorer-1',
    );
    expect(
      within(card).getByRole('link', { name: 'Open the session of explorer-1' }),
    ).toHaveAttribute('href', '/sessions/ses_child7');
    expect(within(card).getByText(/cargo test/)).toBeInTheDocument();
    await userEvent.setup().click(within(card).getByRole('button', { name: 'Allow once' }));
    expect(answer).toHaveBeenCalledWith('req-c1', { reply: 'approve' });
    view.unmount();
    const chinese = renderModel(model, answer, 'zh-CN');
    expect(
      within(
        chinese.container.querySelector('[data-request-id="req-c1"]') as HTMLElement,
      ).getByRole('heading'),
    ).toHaveTextContent('需要批准 — 来自 explorer-1');
  });

  it('speaks Simplified Chinese', () => {
    const model = new ConversationStore();
    model.push(rawEvents('review'));
    renderModel(model, undefined, 'zh-CN');
    expect(screen.getAllByText(/本轮完成/).length).toBeGreaterThan(0);
  });
});

describe('earlier turns', () => {
  /** A model started from the snapshot of a recorded log's turns from `from` on. */
  function seeded(name: string, from: number) {
    const model = new ConversationStore();
    model.seed(recordedSnapshot(name, from), rawEvents(name)[0]);
    return { model, turns: recordedSnapshot(name, 0).turns };
  }

  /** A load that ends when the test says, putting `page` before the turns shown. */
  function heldLoad(model: ConversationStore, page: TurnPage) {
    let finish = () => {};
    const load = vi.fn(
      () =>
        new Promise<void>((resolve) => {
          finish = () => {
            model.prepend(page);
            resolve();
          };
        }),
    );
    return { load, finish: () => finish() };
  }

  /** The transcript live on `model`, as the app shows it. */
  function Live(props: { model: ConversationStore; loadEarlier: () => Promise<void> }) {
    const snapshot = useSyncExternalStore(props.model.subscribe, props.model.getSnapshot);
    return <Conversation snapshot={snapshot} loadEarlier={props.loadEarlier} />;
  }

  function renderLive(
    model: ConversationStore,
    loadEarlier: () => Promise<void>,
    locale: 'en' | 'zh-CN' = 'en',
  ) {
    const registry = new SlotRegistry();
    registerBuiltinToolViews({ slots: registry });
    registerConversationNodes(registry);
    return render(
      <I18nProvider locale={locale}>
        <SlotsProvider registry={registry} shared={{ tool: createToolCallHooks(model) }}>
          <Live model={model} loadEarlier={loadEarlier} />
        </SlotsProvider>
      </I18nProvider>,
    );
  }

  it('loads the previous page from the keyboard, shows it loading, keeps the turns shown', async () => {
    const { model, turns } = seeded('interrupts', 2);
    const { load: loadEarlier, finish } = heldLoad(model, {
      firstTurn: 0,
      turns: turns.slice(0, 2),
    });
    const { container } = renderLive(model, loadEarlier);
    const shown = [...container.querySelectorAll('[data-turn-id]')];
    expect(shown).toHaveLength(2);
    const user = userEvent.setup();
    await user.tab();
    expect(screen.getByRole('log')).toHaveFocus();
    await user.tab();
    const control = screen.getByRole('button', { name: 'Show earlier turns (2)' });
    expect(control).toHaveFocus();
    await user.keyboard('{Enter}');
    expect(loadEarlier).toHaveBeenCalledTimes(1);
    const loading = screen.getByRole('button', { name: 'Loading earlier turns…' });
    expect(loading).toHaveAttribute('aria-busy', 'true');
    // Pressed again while it loads: still one load.
    await user.click(loading);
    expect(loadEarlier).toHaveBeenCalledTimes(1);
    await act(async () => finish());
    const after = [...container.querySelectorAll('[data-turn-id]')];
    expect(after.map((turn) => turn.getAttribute('data-turn-id'))).toEqual(
      turns.map((turn) => turn.turnId),
    );
    // The turns shown before are the same elements: nothing above them re-mounted them.
    expect(after.slice(2)).toEqual(shown);
    expect(after[2]).toBe(shown[0]);
    expect(screen.queryByRole('button', { name: /earlier turns/ })).toBeNull();
    // The control held the focus: the transcript has it now, not the page's body.
    expect(screen.getByRole('log')).toHaveFocus();
  });

  it('says why a page failed and loads it on retry', async () => {
    const { model, turns } = seeded('interrupts', 3);
    const loadEarlier = vi
      .fn<() => Promise<void>>()
      .mockRejectedValueOnce(new Error('the server is stopping'))
      .mockImplementationOnce(() => {
        model.prepend({ firstTurn: 1, turns: turns.slice(1, 3) });
        return Promise.resolve();
      });
    renderLive(model, loadEarlier);
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Show earlier turns (3)' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'Could not load the earlier turns: the server is stopping',
    );
    await user.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByRole('button', { name: 'Show earlier turns (1)' })).toBeVisible();
    expect(screen.queryByRole('alert')).toBeNull();
    expect(loadEarlier).toHaveBeenCalledTimes(2);
  });

  it('loads by itself when the top of the transcript comes near, once at a time', async () => {
    const observers: {
      callback: IntersectionObserverCallback;
      options?: IntersectionObserverInit;
    }[] = [];
    vi.stubGlobal(
      'IntersectionObserver',
      class {
        constructor(callback: IntersectionObserverCallback, options?: IntersectionObserverInit) {
          observers.push({ callback, ...(options === undefined ? {} : { options }) });
        }
        observe() {}
        disconnect() {}
      },
    );
    try {
      const { model, turns } = seeded('interrupts', 2);
      const { load: loadEarlier, finish } = heldLoad(model, {
        firstTurn: 0,
        turns: turns.slice(0, 2),
      });
      const { container } = renderLive(model, loadEarlier);
      const observer = observers.at(-1);
      expect(observer?.options?.root).toBe(container.querySelector('.qc-transcript'));
      expect(observer?.options?.rootMargin).toMatch(/^\d+px 0px 0px 0px$/);
      const near = [{ isIntersecting: true } as IntersectionObserverEntry];
      await act(async () =>
        observer?.callback(
          [{ isIntersecting: false } as IntersectionObserverEntry],
          {} as IntersectionObserver,
        ),
      );
      expect(loadEarlier).not.toHaveBeenCalled();
      await act(async () => observer?.callback(near, {} as IntersectionObserver));
      await act(async () => observer?.callback(near, {} as IntersectionObserver));
      expect(loadEarlier).toHaveBeenCalledTimes(1);
      await act(async () => finish());
      expect(container.querySelectorAll('[data-turn-id]')).toHaveLength(4);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('places a compaction after its turn once that turn is loaded, and speaks Chinese', async () => {
    const { model, turns } = seeded('compacted', 1);
    const loadEarlier = vi.fn(() => {
      model.prepend({ firstTurn: 0, turns: turns.slice(0, 1) });
      return Promise.resolve();
    });
    const { container } = renderLive(model, loadEarlier, 'zh-CN');
    const compaction = model.getSnapshot().tree.compactions[0];
    expect(compaction?.afterTurns).toBe(1);
    expect(container.querySelector('.qc-compaction')).toBeNull();
    await userEvent.setup().click(screen.getByRole('button', { name: '显示更早的轮次（1）' }));
    const divider = container.querySelector('.qc-compaction');
    expect(divider).not.toBeNull();
    const [first, second] = [...container.querySelectorAll('[data-turn-id]')];
    expect(first?.compareDocumentPosition(divider as Element)).toBe(
      Node.DOCUMENT_POSITION_FOLLOWING,
    );
    expect(second?.compareDocumentPosition(divider as Element)).toBe(
      Node.DOCUMENT_POSITION_PRECEDING,
    );
  });
});
