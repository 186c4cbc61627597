import { RecordedTime, Snippet, hitRow, type SessionHitRow } from '@qilin-agent/client-ui-tool';
import { useT } from '@qilin-agent/i18n';
import type { SearchPage } from '@qilin-agent/protocol';
import { useEffect, useRef, useState } from 'react';

/** How long the search waits after the last keystroke before it asks the server. */
export const SEARCH_DELAY_MS = 250;

/** How the page searches the sessions' content (the server's `GET /api/search`). */
export type SearchSessions = (query: string, cursor?: string) => Promise<SearchPage>;

/** Where the content search stands. */
export type ContentSearch =
  | { readonly kind: 'idle' }
  | { readonly kind: 'searching' }
  | {
      readonly kind: 'done';
      readonly hits: readonly SessionHitRow[];
      /** The cursor of the next page, when more hits follow. */
      readonly next?: string;
      /** True while the next page loads. */
      readonly loadingMore?: boolean;
    }
  | { readonly kind: 'failed'; readonly message: string };

/** The hits of a page the server answered, read as the cards read them. */
function pageHits(page: SearchPage): SessionHitRow[] {
  if (!Array.isArray(page.hits)) throw new Error('the answer has no list of hits');
  return page.hits.map((hit, index) => hitRow(hit, `hits[${index}]`));
}

/**
 * The sessions' content searched for `query`: asked [`SEARCH_DELAY_MS`] after the query last
 * changed (an empty query asks nothing); an answer to a query no longer typed is dropped.
 * `more` appends the next page.
 */
export function useContentSearch(
  query: string,
  search: SearchSessions,
): { state: ContentSearch; more: () => void } {
  const trimmed = query.trim();
  /** The latest answer, and the query it answers. */
  const [answer, setAnswer] = useState<{ query: string; state: ContentSearch }>();
  /** Counts the searches asked, so an answer to an older one is dropped. */
  const asked = useRef(0);
  useEffect(() => {
    if (trimmed === '') return;
    asked.current += 1;
    const mine = asked.current;
    const settle = (state: ContentSearch) => {
      if (asked.current === mine) setAnswer({ query: trimmed, state });
    };
    const timer = setTimeout(() => {
      search(trimmed).then(
        (page) => settle(answered([], page)),
        (error: unknown) => settle(failed(error)),
      );
    }, SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [trimmed, search]);
  const state: ContentSearch =
    trimmed === ''
      ? IDLE
      : answer !== undefined && answer.query === trimmed
        ? answer.state
        : SEARCHING;
  const more = () => {
    if (state.kind !== 'done' || state.next === undefined || state.loadingMore === true) return;
    asked.current += 1;
    const mine = asked.current;
    const settle = (next: ContentSearch) => {
      if (asked.current === mine) setAnswer({ query: trimmed, state: next });
    };
    settle({ ...state, loadingMore: true });
    search(trimmed, state.next).then(
      (page) => settle(answered(state.hits, page)),
      (error: unknown) => settle(failed(error)),
    );
  };
  return { state, more };
}

const IDLE: ContentSearch = { kind: 'idle' };
const SEARCHING: ContentSearch = { kind: 'searching' };

/** The state after a page of hits, put after the hits `shown` already. */
function answered(shown: readonly SessionHitRow[], page: SearchPage): ContentSearch {
  try {
    return {
      kind: 'done',
      hits: [...shown, ...pageHits(page)],
      ...(page.next === null ? {} : { next: page.next }),
    };
  } catch (error) {
    return failed(error);
  }
}

/** The state after a search failed. */
function failed(error: unknown): ContentSearch {
  return { kind: 'failed', message: error instanceof Error ? error.message : String(error) };
}

/**
 * The hits of the sidebar's search in the sessions' content: each a link that opens its session
 * at the hit's card (or event), with the snippet's matches highlighted, the session's title, the
 * tool and the time in the viewer's time zone.
 */
export function ContentHits(props: { search: ContentSearch; more: () => void; current?: string }) {
  const t = useT();
  const { search } = props;
  if (search.kind === 'idle') return null;
  return (
    <section
      className="qa-hits"
      aria-labelledby="qa-hits-heading"
      aria-busy={search.kind === 'searching'}
    >
      <h2 id="qa-hits-heading" className="qa-sidebar__heading">
        {t('app.searchHits')}
      </h2>
      {search.kind === 'searching' ? (
        <p className="qa-muted" role="status">
          {t('app.searching')}
        </p>
      ) : search.kind === 'failed' ? (
        <p className="qa-problem" role="alert">
          {t('app.searchFailed', { message: search.message })}
        </p>
      ) : search.hits.length === 0 ? (
        <p className="qa-muted" role="status">
          {t('app.noHits')}
        </p>
      ) : (
        <>
          <ul className="qa-hits__list">
            {search.hits.map((hit) => (
              <li
                key={`${hit.session}:${hit.seq}`}
                className="qa-hit"
                data-session-id={hit.session}
              >
                <a
                  href={hit.href}
                  aria-current={hit.session === props.current ? 'true' : undefined}
                >
                  <span className="qa-hit__title">{hit.title ?? t('app.untitled')}</span>
                  <Snippet parts={hit.snippet} className="qa-hit__snippet" />
                  <span className="qa-hit__meta">
                    {hit.tool === undefined ? null : <span>{hit.tool}</span>}
                    <RecordedTime at={hit.time} className="qa-hit__time" />
                  </span>
                </a>
              </li>
            ))}
          </ul>
          {search.next === undefined ? null : (
            <button
              type="button"
              className="qa-link-button qa-hits__more"
              aria-busy={search.loadingMore === true}
              onClick={props.more}
            >
              {search.loadingMore === true ? t('app.searching') : t('app.moreHits')}
            </button>
          )}
        </>
      )}
    </section>
  );
}
