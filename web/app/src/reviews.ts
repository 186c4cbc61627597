// The calls of a session a person allowed after review refused them, as the server lists them
// (`GET /api/sessions/{id}/reviews`): the page's fold sees only the grants made after the
// snapshot it started from, so a refused call allowed before still reads "Allowed".
import type { ReviewList } from '@qilin-agent/protocol';
import { useCallback, useState } from 'react';
import { api } from './api';

/** The ids of the calls a list of reviews says a person allowed. */
export function allowedCallsOf(list: ReviewList): ReadonlySet<string> {
  return new Set(list.reviews.filter((entry) => entry.granted).map((entry) => entry.callId));
}

const NONE: ReadonlySet<string> = new Set();

/** What [`useAllowedCalls`] gives the page. */
export interface AllowedCalls {
  /** The calls a person allowed, as last listed (none before the first answer). */
  readonly allowed: ReadonlySet<string>;
  /** Reads the list again (when the stream goes live: a reconnect may have missed a grant). */
  readonly refresh: () => void;
}

/**
 * Follows the calls of `sessionId` a person allowed, as the server lists them. A list that
 * cannot be read leaves what was known: the grants made while the page is open still come
 * through the stream, so only the "Allowed" of an older grant waits for the next refresh.
 */
export function useAllowedCalls(sessionId: string): AllowedCalls {
  const [known, setKnown] = useState<{ of: string; allowed: ReadonlySet<string> }>({
    of: sessionId,
    allowed: NONE,
  });
  const refresh = useCallback(() => {
    api.reviews(sessionId).then(
      (list) => setKnown({ of: sessionId, allowed: allowedCallsOf(list) }),
      (error: unknown) => {
        console.warn(`the reviews of session ${sessionId} could not be read`, error);
      },
    );
  }, [sessionId]);
  return { allowed: known.of === sessionId ? known.allowed : NONE, refresh };
}
