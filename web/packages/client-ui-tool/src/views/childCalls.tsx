// The calls of a child session under the `agent` card that started it, live, through the host's
// child feed (`useChildSession` in the shared tool hooks).
import { useT } from '@qilin-agent/i18n';
import type { ConversationTree, ToolNode } from '@qilin-agent/protocol';
import { SlotsProvider, useSlotRegistry } from '@qilin-agent/slots';
import { useEffect, useId, useMemo, useRef, useState, type RefObject } from 'react';
import type { ChildSessionFeed, ToolCallHost, ToolCallShared, UseChildSession } from '../slots';
import { ToolCallTree } from '../tree/ToolCallTree';
import { useToolHooks } from './card';

/** How many of the child's latest calls show before "Show N earlier calls". */
export const LATEST_CHILD_CALLS = 3;

/** The root calls of a conversation, in order (their nested calls render under them). */
export function rootCalls(tree: ConversationTree): ToolNode[] {
  const calls: ToolNode[] = [];
  for (const turn of tree.turns) {
    for (const item of turn.items) if (item.type === 'tool') calls.push(item.node);
  }
  return calls;
}

/** True when two feeds show the same: a host may hand out a new object for the same feed. */
function sameFeed(one: ChildSessionFeed, other: ChildSessionFeed | undefined): boolean {
  return (
    other !== undefined &&
    one.tree === other.tree &&
    one.status === other.status &&
    one.hooks === other.hooks
  );
}

/** A host without a child feed follows nothing. */
const followNothing: UseChildSession = () => undefined;

/**
 * True while `target` is on screen or near it (or always, where the browser cannot say): a
 * child is followed only while its calls could be seen.
 */
function useNearScreen(target: RefObject<HTMLElement | null>): boolean {
  const [near, setNear] = useState(true);
  useEffect(() => {
    const element = target.current;
    if (element === null || typeof IntersectionObserver === 'undefined') return;
    const observer = new IntersectionObserver(
      (entries) => {
        const last = entries[entries.length - 1];
        if (last !== undefined) setNear(last.isIntersecting);
      },
      { rootMargin: '400px 0px' },
    );
    observer.observe(element);
    return () => observer.disconnect();
  }, [target]);
  return near;
}

/** The props of [`ChildCalls`]. */
export interface ChildCallsProps {
  /** The child session. */
  readonly sessionId: string;
  /** True while the call that started it runs: a card that comes then shows the calls at once. */
  readonly running: boolean;
  /** What the child does (names the list). */
  readonly title: string;
  /** The parent card's host: the child works in the same folders. */
  readonly host: ToolCallHost;
}

/**
 * The child session's calls under the card that started it, as they happen: the latest
 * [`LATEST_CHILD_CALLS`] (the rest on demand), each through the same call tree and keyed views
 * as the parent's, with the child's own hooks. A card that came while the call ran shows them
 * at once and keeps them after it ended; one read from history shows them on demand. The host's
 * feed follows the child only while they are shown and on screen, and stops when the card goes. Without a feed from the host, nothing shows (the card keeps its link).
 */
export function ChildCalls(props: ChildCallsProps) {
  const { sessionId, running, title, host } = props;
  const t = useT();
  const shared = useToolHooks();
  const registry = useSlotRegistry();
  const listId = useId();
  const section = useRef<HTMLDivElement>(null);
  const near = useNearScreen(section);
  // Open when the card came while the call ran (and after it ended); else when asked.
  const [open, setOpen] = useState(running);
  const [all, setAll] = useState(false);
  const useChildSession = shared.useChildSession ?? followNothing;
  const following = useChildSession(open && near ? sessionId : undefined);
  // What was last seen stays while the child is scrolled away (it is followed again on return).
  const [seen, setSeen] = useState<ChildSessionFeed>();
  if (following !== undefined && !sameFeed(following, seen)) setSeen(following);
  // The same feed keeps one object, so the child's cards render only when it changed.
  const feed =
    following === undefined
      ? near
        ? undefined
        : seen
      : sameFeed(following, seen)
        ? seen
        : following;
  // The child's cards: the same views and child feed, the child's own store hooks.
  const childShared = useMemo(
    (): { tool: ToolCallShared } | undefined =>
      feed === undefined ? undefined : { tool: { ...shared, ...feed.hooks } },
    [shared, feed],
  );
  const calls = useMemo(() => (feed === undefined ? [] : rootCalls(feed.tree)), [feed]);
  if (shared.useChildSession === undefined) return null;
  const hidden = all ? 0 : Math.max(0, calls.length - LATEST_CHILD_CALLS);
  const shown = hidden === 0 ? calls : calls.slice(hidden);
  return (
    <div
      ref={section}
      role="group"
      className="qt-child-calls"
      aria-label={t('agents.calls.label', { title })}
      data-child-session={sessionId}
    >
      <button
        type="button"
        className="qp-button qt-child-calls__toggle"
        aria-expanded={open}
        aria-controls={listId}
        onClick={() => setOpen(!open)}
      >
        {t(open ? 'agents.calls.hide' : 'agents.calls.show')}
      </button>
      {open && (
        <div id={listId} className="qt-child-calls__body">
          {feed === undefined || feed.status === 'connecting' ? (
            calls.length === 0 && <p className="qp-caption">{t('agents.calls.following')}</p>
          ) : feed.status === 'ended' ? (
            <p className="qp-caption">{t('agents.calls.gone')}</p>
          ) : calls.length === 0 ? (
            <p className="qp-caption">{t('agents.calls.none')}</p>
          ) : null}
          {hidden > 0 && (
            <button type="button" className="qp-button" onClick={() => setAll(true)}>
              {t('agents.calls.earlier', { count: hidden })}
            </button>
          )}
          {childShared !== undefined && shown.length > 0 && (
            <SlotsProvider registry={registry} shared={childShared}>
              <ol className="qt-child-calls__list">
                {shown.map((node) => (
                  <li key={node.callId} className="qt-child-calls__call">
                    <ToolCallTree
                      node={node}
                      loadImage={host.loadImage}
                      {...(host.cwd === undefined ? {} : { cwd: host.cwd })}
                      {...(host.home === undefined ? {} : { home: host.home })}
                      {...(host.openFile === undefined ? {} : { openFile: host.openFile })}
                    />
                  </li>
                ))}
              </ol>
            </SlotsProvider>
          )}
          {all && calls.length > LATEST_CHILD_CALLS && (
            <button type="button" className="qp-button" onClick={() => setAll(false)}>
              {t('agents.calls.latest')}
            </button>
          )}
        </div>
      )}
    </div>
  );
}
