import type { Event } from './generated';
import { ConversationFold, type ConversationTree, type ToolNode } from './tree';
import { readEvent, type EventProblem } from './events';

type Listener = () => void;

/**
 * A session's conversation for views: folds events as they arrive and tells subscribers.
 *
 * Two kinds of subscription keep streaming cheap. [`subscribe`] hears every new tree
 * snapshot; [`subscribePreparing`] hears only one call's raw argument text, so a model
 * streaming arguments re-renders the one view that shows them and nothing else (the tree
 * does not change while arguments stream). Both fit React's `useSyncExternalStore`.
 */
export class ConversationStore {
  private readonly fold = new ConversationFold();
  private readonly listeners = new Set<Listener>();
  private readonly preparingListeners = new Map<string, Set<Listener>>();
  private readonly problems: EventProblem[] = [];

  /** A store holding `events` already folded. */
  constructor(events: Iterable<unknown> = []) {
    this.applyAll(events);
  }

  /** Folds one event (a decoded JSON value; an unreadable one is kept as a problem). */
  apply(value: unknown): void {
    const reading = readEvent(value);
    if (reading.kind === 'invalid') {
      this.problems.push(reading.problem);
      return;
    }
    if (reading.kind === 'unknown') return;
    const change = this.fold.apply(reading.event);
    if (change.preparing !== undefined) this.notifyPreparing(change.preparing);
    if (change.tree) this.listeners.forEach((listener) => listener());
  }

  /** Folds many events and tells subscribers once. */
  applyAll(events: Iterable<unknown>): void {
    const touched = new Set<string>();
    const readable: Event[] = [];
    for (const value of events) {
      const reading = readEvent(value);
      if (reading.kind === 'invalid') this.problems.push(reading.problem);
      if (reading.kind !== 'event') continue;
      readable.push(reading.event);
      if (reading.event.type === 'tool.preparing' || reading.event.type === 'tool.start') {
        touched.add(reading.event.callId);
      }
    }
    const changed = this.fold.applyAll(readable);
    touched.forEach((callId) => this.notifyPreparing(callId));
    if (changed) this.listeners.forEach((listener) => listener());
  }

  /** The current tree snapshot; the same object until an event changes it. */
  getTree = (): ConversationTree => this.fold.tree();

  /** Hears every new tree snapshot; returns the unsubscribe function. */
  subscribe = (listener: Listener): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** The node of a call in the current snapshot. */
  call(callId: string): ToolNode | undefined {
    return this.fold.call(callId);
  }

  /** The raw argument text of a call still preparing, `undefined` once it is dispatched. */
  preparingArguments(callId: string): string | undefined {
    return this.fold.preparingArguments(callId);
  }

  /**
   * Hears changes to one call's raw argument text. A call already dispatched gets no
   * subscription (its arguments are final); at dispatch every listener of the call is told
   * once more and dropped.
   */
  subscribePreparing(callId: string, listener: Listener): () => void {
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
  }

  /** How many listeners follow one call's arguments (for tests and diagnostics). */
  preparingListenerCount(callId: string): number {
    return this.preparingListeners.get(callId)?.size ?? 0;
  }

  /** Events that could not be read, in the order they came. */
  readProblems(): readonly EventProblem[] {
    return this.problems;
  }

  private notifyPreparing(callId: string): void {
    const set = this.preparingListeners.get(callId);
    if (set === undefined) return;
    if (this.fold.preparingArguments(callId) === undefined) this.preparingListeners.delete(callId);
    set.forEach((listener) => listener());
  }
}
