// The `agent` card following its child session live, through a fake child feed: a real
// conversation store fed the events of a recorded session, handed out by a `useChildSession`
// that counts what it follows.
import { act, fireEvent, screen, within } from '@testing-library/react';
import type { Locale } from '@qilin-agent/i18n';
import { ConversationStore, type ChildRecord, type ToolNode } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { useEffect, useMemo, useSyncExternalStore } from 'react';
import { describe, expect, test } from 'vitest';
import { fixtureEvents } from '../../../../test-support/fixtures';
import { renderWithI18n } from '../../../../test-support/render';
import { registerBuiltinToolViews } from '../register';
import type { ChildSessionFeed, ToolCallShared } from '../slots';
import { createToolCallHooks } from '../tree/hooks';
import { ToolCallTree } from '../tree/ToolCallTree';
import { LATEST_CHILD_CALLS } from './childCalls';

const CHILD = 'ses_child1';

const ARGS = { agent: 'explore', prompt: 'Fix the typo.', description: 'Fix the typo' };

const RECORD = {
  sessionId: CHILD,
  agent: 'explore',
  description: 'Fix the typo',
  background: false,
  status: 'completed',
  answer: 'Fixed.',
  steps: 5,
  usage: { inputTokens: 900, outputTokens: 80, cacheReadTokens: 0, cacheWriteTokens: 0 },
  durationMs: 1_200,
} satisfies ChildRecord;

/** The `agent` call: running with its child linked, or ended with the child's record. */
function agentCall(moment: 'running' | 'done'): ToolNode {
  return {
    callId: 'call_1',
    toolName: 'agent',
    caller: 'direct',
    phase: moment,
    arguments: ARGS,
    progress: '',
    requests: [],
    child: { sessionId: CHILD, agent: 'explore', description: 'Fix the typo', background: false },
    ...(moment === 'done'
      ? { outcome: { status: 'ok', content: [], output: RECORD, durationMs: 1_250 } }
      : {}),
    subCalls: [],
  };
}

/**
 * A host's child feed over in-memory stores: what it follows, counted, and each child's store to
 * push events into.
 */
function fakeFeed() {
  const stores = new Map<string, ConversationStore>();
  const following = new Map<string, number>();
  const storeOf = (sessionId: string) => {
    let store = stores.get(sessionId);
    if (store === undefined) {
      store = new ConversationStore();
      stores.set(sessionId, store);
    }
    return store;
  };
  const nothing = () => () => {};
  function useChildSession(sessionId: string | undefined): ChildSessionFeed | undefined {
    useEffect(() => {
      if (sessionId === undefined) return;
      following.set(sessionId, (following.get(sessionId) ?? 0) + 1);
      return () => {
        following.set(sessionId, (following.get(sessionId) ?? 0) - 1);
      };
    }, [sessionId]);
    const store = sessionId === undefined ? undefined : storeOf(sessionId);
    const snapshot = useSyncExternalStore(store?.subscribe ?? nothing, () => store?.getSnapshot());
    const hooks = useMemo(
      () => (store === undefined ? undefined : createToolCallHooks(store)),
      [store],
    );
    return snapshot === undefined || hooks === undefined
      ? undefined
      : { status: 'live', tree: snapshot.tree, hooks };
  }
  return {
    useChildSession,
    /** How many subscriptions to `sessionId` are open. */
    open: (sessionId: string) => following.get(sessionId) ?? 0,
    store: storeOf,
  };
}

/** Renders the call's tree with the fake feed in the shared tool hooks. */
function renderAgent(
  node: ToolNode,
  feed: ReturnType<typeof fakeFeed> | undefined,
  locale: Locale = 'en',
) {
  const registry = new SlotRegistry();
  registerBuiltinToolViews({ slots: registry });
  const shared: { tool: ToolCallShared } = {
    tool: {
      useToolCallArgumentsPartial: () => '',
      usePreviousToolCall: () => undefined,
      ...(feed === undefined ? {} : { useChildSession: feed.useChildSession }),
    },
  };
  const ui = (call: ToolNode) => (
    <SlotsProvider registry={registry} shared={shared}>
      <ToolCallTree node={call} cwd="/home/qilin/workspace" />
    </SlotsProvider>
  );
  const rendered = renderWithI18n(ui(node), locale);
  return { ...rendered, update: (call: ToolNode) => rendered.rerender(ui(call)) };
}

/** The child's cards shown under the agent card: their call ids, roots and nested. */
function childCards(): string[] {
  const section = document.querySelector(`[data-child-session="${CHILD}"]`);
  if (section === null) return [];
  return [...section.querySelectorAll<HTMLElement>('[data-chat-call-id]')].map(
    (element) => element.dataset.chatCallId ?? '',
  );
}

const EVENTS = fixtureEvents('files');

/** How many events of the recorded child come before its `n`-th `tool.start` (from 1). */
function untilStart(n: number): number {
  let seen = 0;
  return EVENTS.findIndex((event) => event.type === 'tool.start' && (seen += 1) === n);
}

describe('the agent card follows its child live', () => {
  test('the child’s calls appear as they start, the latest few, the rest on demand', () => {
    const feed = fakeFeed();
    renderAgent(agentCall('running'), feed);
    expect(feed.open(CHILD)).toBe(1);
    expect(screen.getByText('No calls yet.')).toBeVisible();
    const store = feed.store(CHILD);
    act(() => {
      store.push(EVENTS.slice(0, untilStart(1) + 1));
    });
    expect(childCards()).toHaveLength(1);
    expect(screen.queryByText('No calls yet.')).toBeNull();
    act(() => {
      store.push(EVENTS.slice(untilStart(1) + 1));
    });
    const roots = store
      .getSnapshot()
      .tree.turns.flatMap((turn) =>
        turn.items.flatMap((item) => (item.type === 'tool' ? [item.node.callId] : [])),
      );
    expect(roots.length).toBeGreaterThan(LATEST_CHILD_CALLS);
    // The latest calls only, each through its own card (a read, an edit: the keyed views).
    const shown = childCards();
    expect(shown).toEqual(roots.slice(-LATEST_CHILD_CALLS));
    const hidden = roots.length - LATEST_CHILD_CALLS;
    fireEvent.click(
      screen.getByRole('button', {
        name: hidden === 1 ? 'Show 1 earlier call' : `Show ${hidden} earlier calls`,
      }),
    );
    expect(childCards()).toEqual(roots);
    fireEvent.click(screen.getByRole('button', { name: 'Show only the latest calls' }));
    expect(childCards()).toEqual(roots.slice(-LATEST_CHILD_CALLS));
    // The child's own cards, not the generic one.
    const section = screen.getByRole('group', { name: 'Calls of Fix the typo' });
    expect(within(section).queryByText(/Tool call ·/)).toBeNull();
  });

  test('after the call ends the calls stay; unmounting closes the subscription', () => {
    const feed = fakeFeed();
    feed.store(CHILD).push(EVENTS);
    const rendered = renderAgent(agentCall('running'), feed);
    expect(childCards().length).toBeGreaterThan(0);
    rendered.update(agentCall('done'));
    expect(childCards().length).toBeGreaterThan(0);
    expect(feed.open(CHILD)).toBe(1);
    rendered.unmount();
    expect(feed.open(CHILD)).toBe(0);
  });

  test('a card read from history follows nothing until asked, and stops when hidden', () => {
    const feed = fakeFeed();
    feed.store(CHILD).push(EVENTS);
    renderAgent(agentCall('done'), feed);
    expect(feed.open(CHILD)).toBe(0);
    expect(childCards()).toEqual([]);
    const show = screen.getByRole('button', { name: 'Show the child’s calls' });
    expect(show).toHaveAttribute('aria-expanded', 'false');
    fireEvent.click(show);
    expect(feed.open(CHILD)).toBe(1);
    expect(childCards().length).toBeGreaterThan(0);
    fireEvent.click(screen.getByRole('button', { name: 'Hide the child’s calls' }));
    expect(feed.open(CHILD)).toBe(0);
    expect(childCards()).toEqual([]);
  });

  test('in Chinese', () => {
    const feed = fakeFeed();
    renderAgent(agentCall('done'), feed, 'zh-CN');
    fireEvent.click(screen.getByRole('button', { name: '显示子代理的调用' }));
    expect(screen.getByText('还没有调用。')).toBeVisible();
  });

  test('without a feed from the host, the card keeps its link and shows no calls', () => {
    renderAgent(agentCall('running'), undefined);
    expect(document.querySelector('[data-child-session]')).toBeNull();
    fireEvent.click(document.querySelector('button.qp-row__main') as HTMLElement);
    expect(screen.getByRole('link', { name: 'Open the child session' })).toHaveAttribute(
      'href',
      `/sessions/${CHILD}`,
    );
  });
});
