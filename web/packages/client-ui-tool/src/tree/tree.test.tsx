import { act, fireEvent, render, screen, within } from '@testing-library/react';
import { I18nProvider, type Locale } from '@qilin-agent/i18n';
import { ConversationStore, type Event, type ToolNode } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { useSyncExternalStore, type ComponentType, type ReactElement } from 'react';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { CWD, HOME } from '../../../../test-support/calls';
import {
  fixtureEvents,
  malformedFixtures,
  recordedFixtures,
  untilRequest,
} from '../../../../test-support/fixtures';
import { registerBuiltinToolViews, BUILTIN_TOOL_VIEWS } from '../register';
import { ANY_TOOL, REQUESTS_SLOT, TOOL_VIEW_SLOT, type ToolCallOwnerProps } from '../slots';
import { createToolCallHooks } from './hooks';
import { ToolCallTree } from './ToolCallTree';
import { TWO_LEVELS } from '../../../../gallery/src/handmade';

function rootsOf(store: ConversationStore): ToolNode[] {
  return store
    .getSnapshot()
    .tree.turns.flatMap((turn) =>
      turn.items.flatMap((item) => (item.type === 'tool' ? [item.node] : [])),
    );
}

/** What ui-conversation will do: one ToolCallTree per root call, following the store. */
function Transcript(props: { store: ConversationStore; openFile?: (path: string) => void }) {
  const tree = useSyncExternalStore(props.store.subscribe, () => props.store.getSnapshot().tree);
  return (
    <>
      {tree.turns.flatMap((turn) =>
        turn.items.map((item) =>
          item.type === 'tool' ? (
            <ToolCallTree
              key={item.node.callId}
              node={item.node}
              cwd={CWD}
              home={HOME}
              {...(props.openFile ? { openFile: props.openFile } : {})}
            />
          ) : null,
        ),
      )}
    </>
  );
}

function renderSession(
  store: ConversationStore,
  options: { locale?: Locale; registry?: SlotRegistry; ui?: ReactElement } = {},
) {
  const registry = options.registry ?? new SlotRegistry();
  if (options.registry === undefined) registerBuiltinToolViews({ slots: registry });
  const shared = { tool: createToolCallHooks(store) };
  return render(
    <I18nProvider locale={options.locale ?? 'en'}>
      <SlotsProvider registry={registry} shared={shared}>
        {options.ui ?? <Transcript store={store} />}
      </SlotsProvider>
    </I18nProvider>,
  );
}

/** Registers every built-in view wrapped in a counter of its renders, by call id. */
function countingRegistry(): { registry: SlotRegistry; renders: Map<string, number> } {
  const registry = new SlotRegistry();
  const renders = new Map<string, number>();
  for (const [key, View] of Object.entries(BUILTIN_TOOL_VIEWS) as [
    string,
    ComponentType<ToolCallOwnerProps>,
  ][]) {
    registry.register({ name: TOOL_VIEW_SLOT, key }, (props: ToolCallOwnerProps) => {
      renders.set(props.callId, (renders.get(props.callId) ?? 0) + 1);
      return <View {...props} />;
    });
  }
  return { registry, renders };
}

afterEach(() => vi.restoreAllMocks());

describe('every recorded log renders, with an anchor on every call', () => {
  test.each(
    [...recordedFixtures(), ...malformedFixtures()].flatMap((name) => [
      [name, 'en'],
      [name, 'zh-CN'],
    ]) as [string, Locale][],
  )('%s (%s)', (name, locale) => {
    const errors = vi.spyOn(console, 'error');
    const store = new ConversationStore(fixtureEvents(name));
    const { container } = renderSession(store, { locale });
    const calls: string[] = [];
    const visit = (node: ToolNode) => {
      calls.push(node.callId);
      node.subCalls.forEach(visit);
    };
    rootsOf(store).forEach(visit);
    for (const callId of calls) {
      const wrappers = container.querySelectorAll(
        `[data-chat-anchor-key="call:${CSS.escape(callId)}"]`,
      );
      expect(wrappers, callId).toHaveLength(1);
      expect(wrappers[0]).toHaveAttribute('data-chat-call-id', callId);
    }
    expect(errors).not.toHaveBeenCalled();
  });
});

function event(seq: number, body: Record<string, unknown>): Event {
  return { seq, ...body } as Event;
}

const readDone = [
  {
    type: 'tool.start',
    callId: 'r1',
    toolName: 'read',
    caller: 'direct',
    arguments: { path: 'a.txt' },
    presentation: { action: 'Read', remark: 'a.txt' },
  },
  {
    type: 'tool.result',
    callId: 'r1',
    toolName: 'read',
    caller: 'direct',
    status: 'ok',
    durationMs: 1,
    content: [{ type: 'text', text: '     1\thello\n' }],
    output: {
      path: 'a.txt',
      text: 'hello\n',
      first_line: 1,
      last_line: 1,
      total_lines: 1,
      cut_lines: [],
    },
  },
];

describe('one call’s events render that call only', () => {
  test('a sibling does not render while another call streams 200 argument deltas', () => {
    const store = new ConversationStore(
      [
        { type: 'turn.started', turnId: 't', prompt: 'p' },
        ...readDone,
        { type: 'tool.preparing', callId: 'w1', toolName: 'write', argumentsDelta: '' },
      ].map((body, index) => event(index + 1, body)),
    );
    const { registry, renders } = countingRegistry();
    renderSession(store, { registry });
    const before = new Map(renders);
    // Each delta in its own act: rendered one by one, as they arrive.
    for (let i = 0; i < 200; i += 1) {
      act(() =>
        store.apply(
          event(100 + i, {
            type: 'tool.preparing',
            callId: 'w1',
            toolName: 'write',
            argumentsDelta: 'x'.repeat(64),
          }),
        ),
      );
    }
    expect(renders.get('r1')).toBe(before.get('r1'));
    // Not even the write view renders again: only its preparing row, which reads the text.
    expect(renders.get('w1')).toBe(before.get('w1'));
    expect(screen.getByText('Preparing content 13 KB')).toBeInTheDocument();
  });

  test('live output of a nested call renders it, not its siblings nor other roots', () => {
    const store = new ConversationStore(fixtureEvents('code-mode'));
    const parent = rootsOf(store)[1] as ToolNode;
    const [sibling] = parent.subCalls as [ToolNode];
    store.apply(
      event(9000, {
        type: 'tool.start',
        callId: 'live.1',
        toolName: 'bash',
        caller: 'code',
        parentCallId: parent.callId,
        arguments: { command: 'cargo build' },
        presentation: { action: 'Run command', remark: 'cargo build' },
      }),
    );
    const { registry, renders } = countingRegistry();
    renderSession(store, { registry });
    const before = new Map(renders);
    for (let i = 0; i < 200; i += 1) {
      act(() =>
        store.apply(
          event(9001 + i, {
            type: 'tool.progress',
            callId: 'live.1',
            parentCallId: parent.callId,
            text: `line ${i}\n`,
          }),
        ),
      );
    }
    expect(renders.get('live.1')).toBe((before.get('live.1') ?? 0) + 200);
    expect(renders.get(sibling.callId)).toBe(before.get(sibling.callId));
    for (const root of rootsOf(store)) {
      if (root.callId !== parent.callId)
        expect(renders.get(root.callId), root.callId).toBe(before.get(root.callId));
    }
  });
});

describe('useToolCallArgumentsPartial', () => {
  function setup() {
    const store = new ConversationStore([
      event(1, {
        type: 'tool.preparing',
        callId: 'w',
        toolName: 'write',
        argumentsDelta: '{"path":',
      }),
      event(2, { type: 'tool.preparing', callId: 'other', toolName: 'edit', argumentsDelta: '' }),
    ]);
    const hooks = createToolCallHooks(store);
    const seen: string[] = [];
    function Probe(props: { callId: string }) {
      const raw = hooks.useToolCallArgumentsPartial(props.callId);
      seen.push(raw);
      return <p>{raw === '' ? '(none)' : raw}</p>;
    }
    return { store, seen, Probe };
  }

  test('returns the raw prefix, and "" when there is none', () => {
    const { Probe } = setup();
    render(
      <>
        <Probe callId="w" />
        <Probe callId="missing" />
      </>,
    );
    expect(screen.getByText('{"path":')).toBeInTheDocument();
    expect(screen.getByText('(none)')).toBeInTheDocument();
  });

  test('does not refresh its user while the selected text is unchanged', () => {
    const { store, seen, Probe } = setup();
    render(<Probe callId="w" />);
    const renders = seen.length;
    act(() =>
      store.apply(
        event(3, {
          type: 'tool.preparing',
          callId: 'other',
          toolName: 'edit',
          argumentsDelta: '{"a":1',
        }),
      ),
    );
    act(() =>
      store.apply(
        event(4, { type: 'tool.preparing', callId: 'w', toolName: 'write', argumentsDelta: '' }),
      ),
    );
    expect(seen.length).toBe(renders);
    act(() =>
      store.apply(
        event(5, { type: 'tool.preparing', callId: 'w', toolName: 'write', argumentsDelta: '"a"' }),
      ),
    );
    expect(seen.length).toBe(renders + 1);
    expect(seen.at(-1)).toBe('{"path":"a"');
  });

  test('subscribes only when a view calls it, and stops at dispatch', () => {
    const store = new ConversationStore([
      event(1, { type: 'turn.started', turnId: 't', prompt: 'p' }),
      event(2, {
        type: 'tool.preparing',
        callId: 'w',
        toolName: 'write',
        argumentsDelta: '{"path":"a"',
      }),
      event(3, {
        type: 'tool.preparing',
        callId: 'r',
        toolName: 'read',
        argumentsDelta: '{"path":"a"',
      }),
    ]);
    renderSession(store);
    expect(store.preparingListenerCount('w')).toBe(1);
    expect(store.preparingListenerCount('r')).toBe(0);
    act(() =>
      store.apply(
        event(4, {
          type: 'tool.start',
          callId: 'w',
          toolName: 'write',
          caller: 'direct',
          arguments: { path: 'a', content: 'x\n' },
          presentation: { action: 'Write', remark: 'a' },
        }),
      ),
    );
    expect(store.preparingListenerCount('w')).toBe(0);
    expect(store.subscribePreparing('w', () => undefined)).toBeTypeOf('function');
    expect(store.preparingListenerCount('w')).toBe(0);
  });
});

describe('phases', () => {
  test('preparing: a row that does not expand, with no arguments; start enables the display', () => {
    const store = new ConversationStore([
      event(1, { type: 'turn.started', turnId: 't', prompt: 'p' }),
      event(2, {
        type: 'tool.preparing',
        callId: 'g',
        toolName: 'deploy_site',
        argumentsDelta: '{"site":"do',
      }),
      event(3, {
        type: 'tool.preparing',
        callId: 'b',
        toolName: 'bash',
        argumentsDelta: '{"command":"rm',
      }),
    ]);
    const { container } = renderSession(store);
    expect(screen.getByText('Tool call · deploy_site')).toBeInTheDocument();
    expect(screen.getByText('Shell')).toBeInTheDocument();
    expect(screen.queryAllByRole('button')).toHaveLength(0);
    expect(container).not.toHaveTextContent('do');
    expect(container).not.toHaveTextContent('rm');
    // The end of the argument stream is not a start; tool.start is.
    act(() =>
      store.apply(
        event(4, {
          type: 'tool.start',
          callId: 'b',
          toolName: 'bash',
          caller: 'direct',
          arguments: { command: 'rm -i x' },
          presentation: { action: 'Run command', remark: 'rm -i x' },
        }),
      ),
    );
    expect(screen.getByRole('button', { name: /Shell/ })).toHaveTextContent('rm -i x');
  });

  test('a denied call shows the denial before any view chosen by name', () => {
    const store = new ConversationStore(fixtureEvents('review'));
    renderSession(store);
    const row = screen.getAllByRole('button', { name: /Tool call · bash/ })[0] as HTMLElement;
    expect(row).toHaveTextContent('Auto review');
    expect(row).not.toHaveTextContent('rm -rf');
    fireEvent.click(row);
    expect(
      screen.getByText('Not run: deleting folders is not allowed in this workspace'),
    ).toBeInTheDocument();
  });

  test('a card that throws shows the generic row', () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const store = new ConversationStore([
      event(1, { type: 'turn.started', turnId: 't', prompt: 'p' }),
      ...readDone.map((body, i) => event(i + 2, body)),
    ]);
    const registry = new SlotRegistry();
    registry.register({ name: TOOL_VIEW_SLOT, key: 'read' }, () => {
      throw new Error('broken card');
    });
    renderSession(store, { registry });
    expect(screen.getByRole('button', { name: /Tool call · read/ })).toHaveTextContent('a.txt');
  });
});

describe('live output the runtime left out', () => {
  test('a running command shows its start, what was not shown live, and its latest output', () => {
    const store = new ConversationStore([
      event(1, { type: 'turn.started', turnId: 't', prompt: 'flood', time: '' }),
      event(2, {
        type: 'tool.start',
        callId: 'y1',
        toolName: 'bash',
        caller: 'direct',
        arguments: { command: 'yes' },
        presentation: { action: 'Run command', remark: 'yes' },
      }),
      event(3, { type: 'tool.progress', callId: 'y1', text: 'y\ny\n' }),
      event(4, { type: 'tool.progress', callId: 'y1', text: 'last y\n', omittedBytes: 3_145_728 }),
    ]);
    renderSession(store);
    fireEvent.click(screen.getByRole('button', { name: /yes/ }));
    const output = screen.getByRole('group', { name: 'Output of yes' });
    expect(output).toHaveTextContent(
      /y y … 3\.0 MB not shown live; the result holds the output last y/,
    );
  });
});

describe('the tree', () => {
  test('nests two levels deep, each call through its own view', () => {
    const registry = new SlotRegistry();
    registerBuiltinToolViews({ slots: registry });
    const { container } = render(
      <I18nProvider locale="en">
        <SlotsProvider registry={registry}>
          <ToolCallTree node={TWO_LEVELS} cwd={CWD} />
        </SlotsProvider>
      </I18nProvider>,
    );
    const inner = container.querySelector('[data-chat-call-id="call_1.1"]') as HTMLElement;
    expect(inner.closest('[data-chat-call-id="call_1"]')).not.toBeNull();
    const read = within(inner).getByRole('button', { name: /Read/ });
    expect(read.closest('[data-chat-call-id="call_1.1.1"]')).not.toBeNull();
    expect(screen.getAllByRole('list', { name: 'Calls made by run_code' })).toHaveLength(2);
  });

  test('a finished call shows its first nested calls and every failure; the rest on demand', () => {
    const nested = (index: number) => `code.${index}`;
    const store = new ConversationStore([
      event(1, { type: 'turn.started', turnId: 't1', prompt: 'Read them all.' }),
      event(2, {
        type: 'tool.start',
        callId: 'code',
        toolName: 'run_code',
        caller: 'direct',
        arguments: { code: 'for path in paths: sdk.tool.call("read", {"path": path})' },
      }),
    ]);
    let seq = 3;
    for (let index = 0; index < 9; index += 1) {
      store.apply(
        event(seq++, {
          type: 'tool.start',
          callId: nested(index),
          toolName: 'read',
          caller: 'code',
          parentCallId: 'code',
          arguments: { path: `notes/${index}.md` },
        }),
      );
      store.apply(
        event(seq++, {
          type: 'tool.result',
          callId: nested(index),
          toolName: 'read',
          caller: 'code',
          parentCallId: 'code',
          status: index === 6 ? 'error' : 'ok',
          content: [{ type: 'text', text: index === 6 ? 'no such file' : 'notes' }],
          durationMs: 1,
        }),
      );
    }
    expect(store.skipped).toEqual([]);
    const { container } = renderSession(store);
    const shown = () =>
      [...container.querySelectorAll('[data-chat-call-id^="code."]')].map((node) =>
        node.getAttribute('data-chat-call-id'),
      );
    // While the code runs, every call it made shows, live.
    expect(shown()).toHaveLength(9);
    expect(screen.queryByRole('button', { name: /more calls/ })).toBeNull();
    act(() => {
      store.apply(
        event(seq++, {
          type: 'tool.result',
          callId: 'code',
          toolName: 'run_code',
          caller: 'direct',
          status: 'ok',
          content: [{ type: 'text', text: 'read 9 files' }],
          durationMs: 9,
        }),
      );
    });
    expect(shown()).toEqual(['code.0', 'code.1', 'code.2', 'code.6']);
    const more = screen.getByRole('button', { name: 'Show 5 more calls' });
    expect(more).toHaveAttribute('aria-expanded', 'false');
    fireEvent.click(more);
    expect(shown()).toHaveLength(9);
    const fewer = screen.getByRole('button', { name: 'Show fewer calls' });
    expect(fewer).toHaveAttribute('aria-expanded', 'true');
    fireEvent.click(fewer);
    expect(shown()).toHaveLength(4);
  });

  test('the host gets the original path; the row shows it shortened', () => {
    const opened: string[] = [];
    const store = new ConversationStore(fixtureEvents('files'));
    renderSession(store, {
      ui: <Transcript store={store} openFile={(path) => opened.push(path)} />,
    });
    fireEvent.click(
      screen.getAllByRole('button', { name: 'Open src/report.py' })[0] as HTMLElement,
    );
    expect(opened).toEqual(['src/report.py']);
  });

  test('labels follow the locale', () => {
    const store = new ConversationStore(fixtureEvents('tasks'));
    renderSession(store, { locale: 'zh-CN' });
    expect(screen.getAllByText('待办').length).toBeGreaterThan(0);
    fireEvent.click(screen.getAllByRole('button', { name: /待办/ })[1] as HTMLElement);
    expect(screen.getByText('新增')).toBeInTheDocument();
    expect(screen.getByText('已移除')).toBeInTheDocument();
  });
});

describe('a call waiting for a person', () => {
  test('an approval: the row waits, the note gives the reason, then says who approved', () => {
    const { events, next: resolution } = untilRequest('review', 'bash');
    const store = new ConversationStore(events);
    renderSession(store);
    expect(screen.getByRole('status')).toHaveTextContent(
      'Waiting for approval · pushing publishes the work',
    );
    expect(screen.getAllByRole('img', { name: 'Waiting for you' })).toHaveLength(1);
    act(() => store.apply(resolution));
    expect(screen.queryByRole('status')).toBeNull();
    expect(screen.queryAllByRole('img', { name: 'Waiting for you' })).toHaveLength(0);
    expect(screen.getByText('Approved by fixture')).toBeInTheDocument();
  });

  test('questions: listed while waiting, in either language; the card pairs the answers after', () => {
    const { events } = untilRequest('tasks', 'question');
    const view = renderSession(new ConversationStore(events), { locale: 'zh-CN' });
    const status = screen.getByRole('status');
    expect(status).toHaveTextContent('等待你的回答');
    expect(
      within(status)
        .getAllByRole('listitem')
        .map((item) => item.textContent),
    ).toEqual([
      'Which version are the notes for? 选项：1.4.0 / 2.0.0',
      'When should they be published?',
      'Which kinds of change should be listed? 选项：features / fixes / internal · 可多选',
    ]);
    // While waiting the card does not repeat the questions in its own details.
    expect(screen.queryByRole('button', { name: /提问/ })).toBeNull();
    view.unmount();
    const { container } = renderSession(new ConversationStore(fixtureEvents('tasks')));
    expect(screen.queryByRole('status')).toBeNull();
    const card = container.querySelector('[data-chat-call-id="call_7"]') as HTMLElement;
    fireEvent.click(within(card).getByRole('button', { name: /3 questions/ }));
    expect(within(card).getByText('features, fixes')).toBeInTheDocument();
  });
});

describe('a tool with no view of its own', () => {
  const time = '2026-11-30T12:00:00.000Z';
  const PNG =
    'iVBORw0KGgoAAAANSUhEUgAAAAgAAAAGCAIAAABxZ0isAAAAEUlEQVR4nGM4YaOBFTEMpAQAmkY4QXj/pr4AAAAASUVORK5CYII=';
  const events = (): Event[] => [
    { type: 'turn.started', seq: 1, time, turnId: 't1', prompt: 'shot' },
    {
      type: 'tool.start',
      seq: 2,
      time,
      callId: 'shot_1',
      toolName: 'browser_screenshot',
      caller: 'direct',
      arguments: { url: 'http://127.0.0.1:8000/' },
      presentation: { action: 'Screenshot', remark: 'the home page' },
    },
    {
      type: 'request.opened',
      seq: 3,
      time,
      requestId: 'req-1',
      callId: 'shot_1',
      toolName: 'browser_screenshot',
      ask: {
        kind: 'approval',
        reason: 'it opens a page',
        presentation: { action: 'Screenshot', remark: 'the home page' },
        arguments: {},
      },
    },
    {
      type: 'request.resolved',
      seq: 4,
      time,
      requestId: 'req-1',
      callId: 'shot_1',
      resolution: { outcome: 'approved' },
      resolvedBy: 'terminal',
    },
    {
      type: 'tool.result',
      seq: 5,
      time,
      callId: 'shot_1',
      toolName: 'browser_screenshot',
      caller: 'direct',
      status: 'ok',
      content: [
        { type: 'image', mediaType: 'image/png', data: PNG },
        { type: 'text', text: 'the home page, 8 × 6' },
      ],
      durationMs: 12,
    },
  ];

  test('shows the images of its result in the generic card', async () => {
    const store = new ConversationStore(events());
    renderSession(store);
    fireEvent.click(screen.getByRole('button', { name: /Tool call · browser_screenshot/ }));
    const image = await screen.findByRole('img', {
      name: 'image 1 of 1 in the result (image/png)',
    });
    expect(image.getAttribute('src')).toBe(`data:image/png;base64,${PNG}`);
    expect(image).not.toHaveAttribute('width');
  });

  test('its requests go to the view registered in tool.call.requests, notes otherwise', () => {
    const store = new ConversationStore(events());
    const { unmount } = renderSession(store);
    expect(screen.getByText('it opens a page', { exact: false })).toBeInTheDocument();
    unmount();
    const registry = new SlotRegistry();
    registerBuiltinToolViews({ slots: registry });
    registry.register({ name: REQUESTS_SLOT, key: ANY_TOOL }, (props) => (
      <p data-testid="answerable">
        {props.callId}: {props.requests.map((request) => request.requestId).join(', ')}
      </p>
    ));
    renderSession(store, { registry });
    expect(screen.getByTestId('answerable')).toHaveTextContent('shot_1: req-1');
  });
});
