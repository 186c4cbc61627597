// The session's schedules as the page follows them: read from the server when the stream goes
// live, then changed by the `schedule.*` events of the session's stream (re-read from the server
// when a run fires or ends, since that moves its next fires) and by the panel's deletions.
import {
  asRecord,
  runRow,
  scheduleRow,
  Unsupported,
  type RunRow,
  type ScheduleRow,
} from '@qilin-agent/client-ui-tool';
import { useCallback, useState } from 'react';
import { api } from './api';

/** A recorded schedule read as the cards read it; `undefined` for a value of another shape. */
export function readSchedule(value: unknown, what = 'schedule'): ScheduleRow | undefined {
  try {
    return scheduleRow(value, what);
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}

/** What one `schedule.*` event changes, or `undefined` for any other event or another shape. */
export type ScheduleChange =
  | { readonly kind: 'created'; readonly schedule: ScheduleRow }
  | { readonly kind: 'deleted'; readonly scheduleId: string }
  | { readonly kind: 'run'; readonly scheduleId: string; readonly run: RunRow };

/** The change a `schedule.created`, `.deleted`, `.fired` or `.finished` event makes. */
export function scheduleChangeOf(value: unknown): ScheduleChange | undefined {
  const event = asRecord(value);
  if (event === undefined || typeof event.type !== 'string') return undefined;
  try {
    switch (event.type) {
      case 'schedule.created': {
        const schedule = scheduleRow(event.schedule, 'schedule.created.schedule');
        return { kind: 'created', schedule };
      }
      case 'schedule.deleted':
        return typeof event.scheduleId === 'string'
          ? { kind: 'deleted', scheduleId: event.scheduleId }
          : undefined;
      case 'schedule.fired':
      case 'schedule.finished':
        return typeof event.scheduleId === 'string'
          ? { kind: 'run', scheduleId: event.scheduleId, run: runRow(event.run, event.type) }
          : undefined;
      default:
        return undefined;
    }
  } catch (error) {
    if (error instanceof Unsupported) return undefined;
    throw error;
  }
}

/**
 * The schedules after `change`, newest first, without deleted ones: a created schedule first
 * (replacing an older state of it), a deleted one gone, a run taken as its schedule's last run.
 */
export function applyScheduleChange(
  schedules: readonly ScheduleRow[],
  change: ScheduleChange,
): readonly ScheduleRow[] {
  switch (change.kind) {
    case 'created':
      return [change.schedule, ...schedules.filter((known) => known.id !== change.schedule.id)];
    case 'deleted':
      return schedules.filter((known) => known.id !== change.scheduleId);
    case 'run':
      return schedules.map((known) =>
        known.id === change.scheduleId ? { ...known, lastRun: change.run } : known,
      );
  }
}

/** The schedules the panel lists: every one not deleted, newest first as the server gave them. */
export function shownSchedules(values: readonly unknown[]): readonly ScheduleRow[] {
  return values
    .map((value, at) => readSchedule(value, `schedules[${at}]`))
    .filter((row): row is ScheduleRow => row !== undefined && row.status !== 'deleted');
}

/** What [`useSessionSchedules`] gives the page. */
export interface SessionSchedules {
  /** The schedules as last known; `undefined` before the server answered. */
  readonly schedules: readonly ScheduleRow[] | undefined;
  /** Folds a batch of the stream's events in (give it to the session's stream). */
  readonly onEvents: (events: readonly unknown[]) => void;
  /** Reads the schedules from the server (when the stream goes live, after a run). */
  readonly refresh: () => void;
  /** Takes a deletion the server answered. */
  readonly removed: (scheduleId: string) => void;
}

/** Follows the schedules of `sessionId`. */
export function useSessionSchedules(sessionId: string): SessionSchedules {
  const [state, setState] = useState<{
    of: string;
    schedules: readonly ScheduleRow[] | undefined;
  }>({ of: sessionId, schedules: undefined });
  const change = useCallback(
    (apply: (schedules: readonly ScheduleRow[]) => readonly ScheduleRow[]) =>
      setState((known) => ({
        of: sessionId,
        schedules: apply(known.of === sessionId ? (known.schedules ?? []) : []),
      })),
    [sessionId],
  );
  const refresh = useCallback(() => {
    // A server that cannot say (one without schedules) leaves what is known: no panel at all
    // when nothing is.
    api.schedules(sessionId).then(
      (page) => setState({ of: sessionId, schedules: shownSchedules(page.schedules) }),
      () => undefined,
    );
  }, [sessionId]);
  const onEvents = useCallback(
    (events: readonly unknown[]) => {
      const changes = events
        .map(scheduleChangeOf)
        .filter((found): found is ScheduleChange => found !== undefined);
      if (changes.length === 0) return;
      change((schedules) => changes.reduce(applyScheduleChange, schedules));
      // A run moves its schedule's next fires, run count and perhaps status: read them again.
      if (changes.some((found) => found.kind === 'run')) refresh();
    },
    [change, refresh],
  );
  const removed = useCallback(
    (scheduleId: string) =>
      change((schedules) => applyScheduleChange(schedules, { kind: 'deleted', scheduleId })),
    [change],
  );
  return {
    schedules: state.of === sessionId ? state.schedules : undefined,
    onEvents,
    refresh,
    removed,
  };
}
