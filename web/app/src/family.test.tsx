import { fireEvent, renderHook, screen, waitFor, within } from '@testing-library/react';
import type { SessionInfo, SessionPage, SessionView } from '@qilin-agent/protocol';
import { describe, expect, test, vi } from 'vitest';
import { renderWithI18n } from '../../test-support/render';
import { ChildSessions, useSessionFamily, type FamilyReader } from './family';

const TIME = '2026-12-02T08:00:00Z';

/** A session of the store: top-level, or a child of `parent`. */
function info(id: string, title: string, parent?: string): SessionInfo {
  return {
    id,
    workspace: '/w',
    agent: parent === undefined ? 'qilin' : 'explore',
    agentFile: null,
    model: 'scripted:s',
    title,
    createdAt: TIME,
    lastActivity: TIME,
    status: 'idle',
    turns: 1,
    parentSessionId: parent ?? null,
    parentCallId: parent === undefined ? null : 'call_1',
  } as SessionInfo;
}

const PARENT = info('ses_parent', 'Make uploads retry');
const CHILDREN = [
  info('ses_child1', 'Find the retry logic', 'ses_parent'),
  info('ses_child2', 'Read the upload tests', 'ses_parent'),
];

/** The server: each session's view, and each parent's children; what was asked. */
function server() {
  const asked: string[] = [];
  const childrenOf = (id: string) => CHILDREN.filter((child) => child.parentSessionId === id);
  const reader: FamilyReader = {
    session: (id) => {
      asked.push(`session ${id}`);
      const found = [PARENT, ...CHILDREN].find((session) => session.id === id);
      if (found === undefined) return Promise.reject(new Error(`no session ${id}`));
      return Promise.resolve({ ...found, children: childrenOf(id) } as unknown as SessionView);
    },
    children: (parent) => {
      asked.push(`children ${parent}`);
      return Promise.resolve({ sessions: childrenOf(parent) } as unknown as SessionPage);
    },
  };
  return { reader, asked };
}

describe('the open session’s family', () => {
  test('a parent: its children, from its view', async () => {
    const { reader, asked } = server();
    const { result } = renderHook(() => useSessionFamily('ses_parent', 60_000, reader));
    await waitFor(() => expect(result.current.children.get('ses_parent')).toEqual(CHILDREN));
    expect(result.current.parent).toBeUndefined();
    expect(asked).toEqual(['session ses_parent']);
  });

  test('a child: its parent and its siblings', async () => {
    const { reader, asked } = server();
    const { result } = renderHook(() => useSessionFamily('ses_child2', 60_000, reader));
    await waitFor(() => expect(result.current.parent).toBe('ses_parent'));
    expect(result.current.children.get('ses_parent')).toEqual(CHILDREN);
    expect(asked).toEqual(['session ses_child2', 'children ses_parent']);
  });

  test('read again at the list’s pace; another session’s family never shows', async () => {
    vi.useFakeTimers();
    try {
      const { reader, asked } = server();
      const { result, rerender } = renderHook(
        ({ id }: { id: string | undefined }) => useSessionFamily(id, 5000, reader),
        { initialProps: { id: 'ses_parent' as string | undefined } },
      );
      await vi.advanceTimersByTimeAsync(5000);
      expect(asked).toEqual(['session ses_parent', 'session ses_parent']);
      rerender({ id: undefined });
      expect(result.current.children.size).toBe(0);
      await vi.advanceTimersByTimeAsync(10_000);
      expect(asked).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('child sessions in the sidebar', () => {
  const family = { children: new Map([['ses_parent', CHILDREN]]) };

  test('folded under a parent that is not open; unfolded on demand; a child opens', () => {
    const open = vi.fn();
    renderWithI18n(
      <ChildSessions parent={PARENT} family={family} current="ses_other" open={open} />,
    );
    const toggle = screen.getByRole('button', { name: '2 child sessions' });
    expect(toggle).toHaveAttribute('aria-expanded', 'false');
    expect(screen.queryByRole('list')).toBeNull();
    fireEvent.click(toggle);
    const list = screen.getByRole('list', { name: 'Child sessions of Make uploads retry' });
    const link = within(list).getByRole('link', { name: /Read the upload tests/ });
    expect(link).toHaveAttribute('href', '/sessions/ses_child2');
    fireEvent.click(link);
    expect(open).toHaveBeenCalledWith('ses_child2');
  });

  test('unfolded when a child is open, which is marked as the page', () => {
    renderWithI18n(
      <ChildSessions parent={PARENT} family={family} current="ses_child1" open={() => {}} />,
      'zh-CN',
    );
    expect(screen.getByRole('button', { name: '2 个子会话' })).toHaveAttribute(
      'aria-expanded',
      'true',
    );
    expect(screen.getByRole('link', { name: /Find the retry logic/ })).toHaveAttribute(
      'aria-current',
      'page',
    );
  });

  test('nothing under a session with no known children', () => {
    const { container } = renderWithI18n(
      <ChildSessions
        parent={CHILDREN[0] as SessionInfo}
        family={family}
        current={undefined}
        open={() => {}}
      />,
    );
    expect(container).toBeEmptyDOMElement();
  });
});
