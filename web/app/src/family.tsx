// Child sessions in the sidebar: the server lists top-level sessions only, and a parent's view
// lists its children; the sidebar unfolds them under their parent.
import { useT } from '@qilin-agent/i18n';
import type { SessionInfo, SessionPage, SessionView } from '@qilin-agent/protocol';
import { useEffect, useId, useState } from 'react';
import { api } from './api';

/** How the sidebar reads a session's family from the server. */
export interface FamilyReader {
  /** A session's view: its parent, its children. */
  session(id: string): Promise<SessionView>;
  /** The children of a session, oldest first. */
  children(parent: string): Promise<SessionPage>;
}

/** What the sidebar knows of the open session's family. */
export interface SessionFamily {
  /** Children by their parent's id: the open session's, and its parent's when it is a child. */
  readonly children: ReadonlyMap<string, readonly SessionInfo[]>;
  /** The open session's parent, when it is a child. */
  readonly parent?: string;
}

const EMPTY: SessionFamily = { children: new Map() };

/**
 * The family of the open session, read again every `everyMs` (the list's own pace) while it is
 * open: its children (from its view), and when it is a child, its parent and its siblings (the
 * parent's children). Another session's family never shows, even before the new one arrives.
 */
export function useSessionFamily(
  current: string | undefined,
  everyMs = 5000,
  reader: FamilyReader = api,
): SessionFamily {
  const [family, setFamily] = useState<{ of: string; family: SessionFamily }>();
  useEffect(() => {
    if (current === undefined) return;
    let live = true;
    const read = async () => {
      try {
        const view = await reader.session(current);
        const children = new Map<string, readonly SessionInfo[]>();
        if (view.children.length > 0) children.set(current, view.children);
        const parent = view.parentSessionId ?? undefined;
        if (parent !== undefined) children.set(parent, (await reader.children(parent)).sessions);
        if (live) {
          setFamily({
            of: current,
            family: parent === undefined ? { children } : { children, parent },
          });
        }
      } catch {
        // The list works without it: the children show once the server answers.
      }
    };
    void read();
    const timer = setInterval(() => void read(), everyMs);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [current, everyMs, reader]);
  return family !== undefined && family.of === current ? family.family : EMPTY;
}

/**
 * Under a session of the sidebar, its child sessions when the sidebar knows of them: folded
 * behind a button that says how many, unfolded at once when the open session is the parent or
 * one of them (the open one marked as the page).
 */
export function ChildSessions(props: {
  parent: SessionInfo;
  family: SessionFamily;
  current: string | undefined;
  open: (id: string) => void;
}) {
  const { parent, family, current, open } = props;
  const t = useT();
  const listId = useId();
  const children = family.children.get(parent.id) ?? [];
  const inFamily = current === parent.id || children.some((child) => child.id === current);
  const [chosen, setChosen] = useState<boolean>();
  const unfolded = chosen ?? inFamily;
  if (children.length === 0) return null;
  const title = parent.title ?? t('app.untitled');
  return (
    <div className="qa-children">
      <button
        type="button"
        className="qa-link-button qa-children__toggle"
        aria-expanded={unfolded}
        aria-controls={listId}
        onClick={() => setChosen(!unfolded)}
      >
        {t('app.children', { count: children.length })}
      </button>
      {unfolded && (
        <ul id={listId} className="qa-children__list" aria-label={t('app.childrenOf', { title })}>
          {children.map((child) => (
            <li key={child.id} className="qa-children__item" data-session-id={child.id}>
              <a
                href={`/sessions/${encodeURIComponent(child.id)}`}
                aria-current={child.id === current ? 'page' : undefined}
                onClick={(event) => {
                  event.preventDefault();
                  open(child.id);
                }}
              >
                <span className="qa-sessions__title">{child.title ?? t('app.untitled')}</span>
                <span className="qa-sessions__meta">
                  {child.status === 'running' ? '● ' : ''}
                  {child.agent} · {child.model}
                </span>
              </a>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
