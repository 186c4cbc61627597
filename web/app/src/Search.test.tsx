import { act, fireEvent, screen, within } from '@testing-library/react';
import type { SearchHit, SearchPage } from '@qilin-agent/protocol';
import { useState } from 'react';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { renderWithI18n } from '../../test-support/render';
import { ContentHits, SEARCH_DELAY_MS, useContentSearch, type SearchSessions } from './Search';

const TIME = '2026-12-02T05:00:00Z';

function hit(session: string, seq: number, snippet: string, callId: string | null): SearchHit {
  return {
    session,
    title: session === 's-untitled' ? '' : `Title of ${session}`,
    seq,
    turn: 1,
    callId,
    tool: callId === null ? null : 'bash',
    field: callId === null ? 'prompt' : 'result',
    snippet,
    time: TIME,
    score: 1,
  };
}

/** The sidebar's search box and its hits, searching with `search`. */
function Sidebar(props: { search: SearchSessions }) {
  const [query, setQuery] = useState('');
  const { state, more } = useContentSearch(query, props.search);
  return (
    <>
      <input
        type="search"
        aria-label="Search sessions"
        value={query}
        onChange={(event) => setQuery(event.target.value)}
      />
      <ContentHits search={state} more={more} />
    </>
  );
}

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

/** Types `text` into the box, a character at a time. */
function type(text: string) {
  const box = screen.getByRole('searchbox', { name: 'Search sessions' });
  for (let end = 1; end <= text.length; end += 1) {
    fireEvent.change(box, { target: { value: text.slice(0, end) } });
  }
}

describe('the sidebar searches the sessions’ content', () => {
  test('once typing pauses: the hits link to their card, the matches highlighted', async () => {
    const search = vi.fn<SearchSessions>(() =>
      Promise.resolve({
        hits: [
          hit('s1', 40, 'the «migration» failed', 'call_4'),
          hit('s-untitled', 2, 'run the «migration»', null),
        ],
        next: null,
      } satisfies SearchPage),
    );
    renderWithI18n(<Sidebar search={search} />);
    type('migration');
    expect(screen.getByRole('status')).toHaveTextContent('Searching…');
    await act(() => vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS - 1));
    expect(search).not.toHaveBeenCalled();
    await act(() => vi.advanceTimersByTimeAsync(1));
    expect(search.mock.calls).toEqual([['migration']]);
    const links = within(
      screen.getByRole('region', { name: 'Found in the sessions' }),
    ).getAllByRole('link');
    expect(links.map((link) => link.getAttribute('href'))).toEqual([
      '/sessions/s1?at=call:call_4',
      '/sessions/s-untitled?at=seq:2',
    ]);
    expect(links[0]).toHaveTextContent('Title of s1');
    expect(links[0]?.querySelector('mark')?.textContent).toBe('migration');
    expect(links[0]?.querySelector('time')).toHaveAttribute('dateTime', TIME);
    expect(links[1]).toHaveTextContent('Untitled session');
  });

  test('an answer to a query no longer typed is dropped; an empty query asks nothing', async () => {
    let answer: (page: SearchPage) => void = () => {};
    const search = vi.fn<SearchSessions>(
      () => new Promise<SearchPage>((resolve) => (answer = resolve)),
    );
    renderWithI18n(<Sidebar search={search} />);
    type('old');
    await act(() => vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS));
    const late = answer;
    type('new');
    await act(async () =>
      late({ hits: [hit('s1', 3, '«old»', null)], next: null } satisfies SearchPage),
    );
    expect(screen.queryByRole('link')).toBeNull();
    await act(() => vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS));
    await act(async () =>
      answer({ hits: [hit('s2', 3, '«new»', null)], next: null } satisfies SearchPage),
    );
    expect(screen.getByRole('link')).toHaveAttribute('href', '/sessions/s2?at=seq:3');
    fireEvent.change(screen.getByRole('searchbox'), { target: { value: '  ' } });
    await act(() => vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS * 2));
    expect(screen.queryByRole('region')).toBeNull();
    expect(search).toHaveBeenCalledTimes(2);
  });

  test('more hits load after the ones shown', async () => {
    const search = vi.fn<SearchSessions>((_, cursor) =>
      Promise.resolve(
        (cursor === undefined
          ? { hits: [hit('s1', 3, '«a»', null)], next: 'page-2' }
          : { hits: [hit('s2', 4, '«a»', null)], next: null }) satisfies SearchPage,
      ),
    );
    renderWithI18n(<Sidebar search={search} />);
    type('a');
    await act(() => vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS));
    await act(async () => fireEvent.click(screen.getByRole('button', { name: 'Show more hits' })));
    expect(search.mock.calls).toEqual([['a'], ['a', 'page-2']]);
    expect(screen.getAllByRole('link').map((link) => link.getAttribute('href'))).toEqual([
      '/sessions/s1?at=seq:3',
      '/sessions/s2?at=seq:4',
    ]);
    expect(screen.queryByRole('button', { name: 'Show more hits' })).toBeNull();
  });

  test('a refused search says why; an answer of another shape says what is wrong', async () => {
    const search = vi
      .fn<SearchSessions>()
      .mockRejectedValueOnce(new Error('`q` is empty: give some words to search for'))
      .mockResolvedValueOnce({ hits: [{ session: 's1' }], next: null } as unknown as SearchPage);
    renderWithI18n(<Sidebar search={search} />, 'en');
    type('x');
    await act(() => vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS));
    expect(screen.getByRole('alert')).toHaveTextContent(
      'Could not search: `q` is empty: give some words to search for',
    );
    type('xy');
    await act(() => vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS));
    expect(screen.getByRole('alert')).toHaveTextContent('hits[0].seq is not a count');
  });
});
