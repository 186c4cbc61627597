import { readEvent } from './events';
import type { AgentInfo, Event, Snapshot, ToolNode } from './generated';
import { ConversationFold, type ConversationTree, type TurnPage } from './tree';

/** What `session.started` said about the session. */
export interface SessionFacts {
  /** The session's id. */
  readonly sessionId: string;
  /** The agent it runs. */
  readonly agent: AgentInfo;
  /** The model, as `provider:name`. */
  readonly model: string;
  /** The workspace folder, absolute. */
  readonly workspace: string;
}

/** One published state of a conversation: immutable, replaced on every change. */
export interface ConversationSnapshot {
  /** The call tree, folded by the protocol package's fold (the runtime's own rules). */
  readonly tree: ConversationTree;
  /** What `session.started` said, once seen. */
  readonly session?: SessionFacts;
  /** The `seq` of the last event folded in (0 for none). */
  readonly lastSeq: number;
  /** True while the last turn has not finished. */
  readonly running: boolean;
}

/** Why one value given to [`ConversationStore.push`] was not folded. */
export interface SkippedEvent {
  /** The event's `seq`, when it had one. */
  readonly seq?: number;
  /** What was wrong. */
  readonly message: string;
}

type Listener = () => void;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A session's conversation for views, the one store every client package uses: fed with its
 * events in `seq` order (from the server's snapshot, a page of history, then a live stream),
 * an event at or below the last `seq` seen is dropped, so history and a resumed stream can
 * overlap without showing anything twice. The call tree is [`ConversationFold`]'s (each call's
 * requests, phase times and step, each turn's usage are in it); only the session's facts are
 * kept beside it.
 *
 * Two kinds of subscription keep streaming cheap. [`subscribe`] hears every new snapshot
 * (`useSyncExternalStore(store.subscribe, store.getSnapshot)`); [`subscribePreparing`] hears
 * only one call's raw argument text, so a model streaming arguments re-renders the one view
 * that shows them and nothing else (the tree does not change while arguments stream).
 */
export class ConversationStore {
  private fold = new ConversationFold();
  private readonly listeners = new Set<Listener>();
  private readonly preparingListeners = new Map<string, Set<Listener>>();
  private session: SessionFacts | undefined;
  private lastSeq = 0;
  private snapshot: ConversationSnapshot;
  /** Values that were not events, with why; for a diagnostic view. */
  readonly skipped: SkippedEvent[] = [];

  /** A store holding `events` (parsed JSON values, in `seq` order) already folded. */
  constructor(events: Iterable<unknown> = []) {
    this.snapshot = this.build();
    this.push(events);
  }

  /** The current snapshot. */
  getSnapshot = (): ConversationSnapshot => this.snapshot;

  /** Hears every new snapshot. */
  subscribe = (listener: Listener): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** The raw argument text of a call still preparing; `undefined` once it is dispatched. */
  preparingArguments = (callId: string): string | undefined => this.fold.preparingArguments(callId);

  /**
   * Hears changes of one call's raw argument text. A call already dispatched gets no
   * subscription (its arguments are final); at dispatch every listener of the call is told
   * once more and dropped.
   */
  subscribePreparing = (callId: string, listener: Listener): (() => void) => {
    if (
      this.fold.preparingArguments(callId) === undefined &&
      this.fold.call(callId)?.phase !== 'preparing'
    ) {
      return () => undefined;
    }
    let set = this.preparingListeners.get(callId);
    if (set === undefined) {
      set = new Set();
      this.preparingListeners.set(callId, set);
    }
    set.add(listener);
    return () => {
      const current = this.preparingListeners.get(callId);
      current?.delete(listener);
      if (current?.size === 0) this.preparingListeners.delete(callId);
    };
  };

  /** How many listeners follow one call's arguments (for tests and diagnostics). */
  preparingListenerCount(callId: string): number {
    return this.preparingListeners.get(callId)?.size ?? 0;
  }

  /** The node of a call in the current snapshot. */
  call(callId: string): ToolNode | undefined {
    return this.fold.call(callId);
  }

  /** The `seq` of the last event folded in. */
  get seq(): number {
    return this.lastSeq;
  }

  /**
   * Starts the conversation from the server's snapshot of its latest turns, with the session's
   * first event (its `session.started`, which the snapshot leaves out) when it was read; the
   * events after the snapshot's `headSeq` follow with [`push`]. Only a store that has folded nothing takes a
   * seed; returns whether it did. Throws a `TurnPageError` for a snapshot that is not a tree.
   */
  seed(snapshot: Snapshot, first?: unknown): boolean {
    if (this.lastSeq !== 0 || !Number.isSafeInteger(snapshot.headSeq) || snapshot.headSeq < 0) {
      return false;
    }
    this.fold = ConversationFold.seeded(snapshot);
    const started = first === undefined ? undefined : this.read(first);
    if (started !== undefined && started.seq <= snapshot.headSeq) this.side(started);
    this.lastSeq = snapshot.headSeq;
    this.publish(new Set());
    return true;
  }

  /**
   * Puts a page of earlier turns (`GET /api/sessions/{id}/snapshot?before=N`, N the tree's
   * `firstTurn`) before the ones shown; every node shown keeps its identity. Returns how many
   * earlier turns remain to load (the new `tree.firstTurn`). Throws a `TurnPageError` for a page
   * that is not a tree or leaves a gap.
   */
  prepend(page: TurnPage): number {
    if (this.fold.prepend(page) > 0) this.publish(new Set());
    return this.fold.tree().firstTurn;
  }

  /** Folds one event (a parsed JSON value), as [`push`] does; returns whether it changed anything. */
  apply(value: unknown): boolean {
    return this.push([value]);
  }

  /**
   * Folds events (parsed JSON values, in `seq` order) and publishes one snapshot; returns
   * whether anything changed. Values already seen (by `seq`) are dropped.
   */
  push(values: Iterable<unknown>): boolean {
    const fresh: Event[] = [];
    for (const value of values) {
      const event = this.read(value);
      if (event === undefined) continue;
      if (event.seq <= this.lastSeq) continue;
      this.lastSeq = event.seq;
      fresh.push(event);
      this.side(event);
    }
    const changed = fresh.length > 0;
    const preparing = new Set<string>();
    if (changed) {
      // One snapshot for the batch: the fold changes what it made for the batch in place.
      this.fold.applyAll(fresh, (change) => {
        if (change.preparing !== undefined) preparing.add(change.preparing);
      });
      this.publish(preparing);
    }
    return changed;
  }

  /** Publishes a new snapshot; the listeners of the calls in `preparing` hear it too. */
  private publish(preparing: ReadonlySet<string>): void {
    this.snapshot = this.build();
    this.listeners.forEach((listener) => listener());
    for (const callId of preparing) {
      const set = this.preparingListeners.get(callId);
      if (set === undefined) continue;
      if (this.fold.preparingArguments(callId) === undefined)
        this.preparingListeners.delete(callId);
      set.forEach((listener) => listener());
    }
  }

  private read(value: unknown): Event | undefined {
    const reading = readEvent(value);
    if (reading.kind === 'event') return reading.event;
    const seq = isObject(value) && typeof value.seq === 'number' ? value.seq : undefined;
    if (reading.kind === 'unknown' && isObject(value) && typeof value.seq === 'number') {
      // A type newer than this client: it still moves the cursor, so a resume never asks
      // for it again.
      if (value.seq > this.lastSeq) this.lastSeq = value.seq;
      return undefined;
    }
    this.skipped.push({
      ...(seq === undefined ? {} : { seq }),
      message:
        reading.kind === 'invalid' ? reading.problem.message : `\`${reading.type}\` is malformed`,
    });
    return undefined;
  }

  private side(event: Event): void {
    switch (event.type) {
      case 'session.started':
        this.session = {
          sessionId: event.sessionId,
          agent: event.agent,
          model: event.model,
          workspace: event.workspace,
        };
        break;
      default:
        break;
    }
  }

  private build(): ConversationSnapshot {
    const tree = this.fold.tree();
    const last = tree.turns[tree.turns.length - 1];
    return {
      tree,
      ...(this.session === undefined ? {} : { session: this.session }),
      lastSeq: this.lastSeq,
      running: last !== undefined && last.turnId !== '' && last.finished === undefined,
    };
  }
}
