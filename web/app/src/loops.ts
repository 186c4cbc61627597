// The session's loops as the page follows them, for the `loop_start` cards: each loop's state
// from the session's `loop.*` events and, when the stream goes live (a reconnect may have missed
// events, and a reload starts after them), from the server's list.
import { LoopBook, loopRow, Unsupported, type LoopRow } from '@qilin-agent/client-ui-tool';
import { useCallback, useMemo } from 'react';
import { api } from './api';

/** The loops a `GET /api/sessions/{id}/loops` answer holds; those of another shape are left out. */
export function readLoops(value: unknown): LoopRow[] {
  if (!Array.isArray(value)) return [];
  const rows: LoopRow[] = [];
  value.forEach((item, at) => {
    try {
      rows.push(loopRow(item, `loops[${at}]`));
    } catch (error) {
      if (!(error instanceof Unsupported)) throw error;
    }
  });
  return rows;
}

/** What [`useSessionLoops`] gives the page. */
export interface SessionLoops {
  /** The session's loops by id, for the cards' `useLoop`. */
  readonly book: LoopBook;
  /** Folds a batch of the stream's events in (give it to the session's stream). */
  readonly onEvents: (events: readonly unknown[]) => void;
  /** Reads the session's loops from the server; a server that cannot say leaves what is known. */
  readonly refresh: () => void;
}

/** Follows the loops of `sessionId`: one book per session, fed by its events and the server. */
export function useSessionLoops(sessionId: string): SessionLoops {
  // A new session starts a new book: no loop of another session shows.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const book = useMemo(() => new LoopBook(), [sessionId]);
  const refresh = useCallback(() => {
    api.loops(sessionId).then(
      (value) => book.take(readLoops(value)),
      () => undefined,
    );
  }, [sessionId, book]);
  return { book, onEvents: book.onEvents, refresh };
}
