// The session's goal as the page follows it: read from the server when the stream goes live,
// and from the `goal.created` / `goal.updated` events of the session's stream, and from the
// answers of the banner's own actions. Each carries the goal's whole state.
import { asRecord, goalRow, Unsupported, type GoalRow } from '@qilin-agent/client-ui-tool';
import { useCallback, useState } from 'react';
import { api } from './api';

/** A recorded goal read as the cards read it; `undefined` for a value of another shape. */
export function readGoal(value: unknown, what = 'goal'): GoalRow | undefined {
  try {
    return goalRow(value, what);
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}

/**
 * The goal a `goal.created` or `goal.updated` event carries; `undefined` for any other event,
 * or one whose goal is not of the recorded shape.
 */
export function goalOfEvent(value: unknown): GoalRow | undefined {
  const event = asRecord(value);
  if (event === undefined) return undefined;
  if (event.type !== 'goal.created' && event.type !== 'goal.updated') return undefined;
  return readGoal(event.goal, `${event.type}.goal`);
}

/**
 * The later of two states of the session's goal: `next`, unless it is an older state of the
 * same goal than `current` (an answer that crossed a newer event on the way).
 */
export function laterGoal(current: GoalRow | null, next: GoalRow | null): GoalRow | null {
  if (current === null || next === null || current.id !== next.id) return next;
  return Date.parse(next.updatedAt) < Date.parse(current.updatedAt) ? current : next;
}

/** What [`useSessionGoal`] gives the page. */
export interface SessionGoal {
  /** The goal as last known; `null` when the session has none, `undefined` before it is known. */
  readonly goal: GoalRow | null | undefined;
  /** Folds a batch of the stream's events in (give it to the session's stream). */
  readonly onEvents: (events: readonly unknown[]) => void;
  /** Takes a state the server answered with (the banner's actions). */
  readonly take: (goal: GoalRow) => void;
  /**
   * Reads the goal from the server (when the stream goes live: a reconnect may have missed
   * events); a server that cannot say leaves what is known, or `null`.
   */
  readonly refresh: () => void;
}

/**
 * Follows the goal of `sessionId`: what the server says on [`SessionGoal.refresh`], then each
 * goal event of the stream and each answer the banner's actions get, the later state winning.
 */
export function useSessionGoal(sessionId: string): SessionGoal {
  const [goal, setGoal] = useState<{ of: string; goal: GoalRow | null | undefined }>({
    of: sessionId,
    goal: undefined,
  });
  const fold = useCallback(
    (next: GoalRow | null) =>
      setGoal((known) => ({
        of: sessionId,
        goal: laterGoal(known.of === sessionId ? (known.goal ?? null) : null, next),
      })),
    [sessionId],
  );
  const refresh = useCallback(() => {
    api.session(sessionId).then(
      (view) => fold(view.goal == null ? null : (readGoal(view.goal) ?? null)),
      () =>
        setGoal((known) =>
          known.of === sessionId && known.goal !== undefined
            ? known
            : { of: sessionId, goal: null },
        ),
    );
  }, [sessionId, fold]);
  const onEvents = useCallback(
    (events: readonly unknown[]) => {
      let next: GoalRow | undefined;
      for (const event of events) next = goalOfEvent(event) ?? next;
      if (next !== undefined) fold(next);
    },
    [fold],
  );
  return {
    goal: goal.of === sessionId ? goal.goal : undefined,
    onEvents,
    take: fold,
    refresh,
  };
}
