import {
  foldEvents,
  readEvent,
  type AgentInfo,
  type ConversationTree,
  type Event,
  type RequestOpenedEvent,
  type RequestResolution,
  type ToolNode,
  type Usage,
} from '@qilin-agent/protocol';

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

/** A request that waits (or waited) for a person, with its answer once it has one. */
export interface RequestState {
  /** The request as opened. */
  readonly opened: RequestOpenedEvent;
  /** The answer, or why there is none, once resolved. */
  readonly resolution?: RequestResolution;
  /** Who resolved it. */
  readonly resolvedBy?: string;
}

/** Tokens a turn used, summed over its steps. */
export interface TurnUsage extends Usage {
  /** How many steps reported usage. */
  readonly steps: number;
}

/** One published state of a conversation: immutable, replaced on every change. */
export interface ConversationSnapshot {
  /** The call tree, folded by the protocol package's fold (the runtime's own rules). */
  readonly tree: ConversationTree;
  /** What `session.started` said, once seen. */
  readonly session?: SessionFacts;
  /** Every request in the order opened. */
  readonly requests: readonly RequestState[];
  /** Token usage by turn id. */
  readonly usage: ReadonlyMap<string, TurnUsage>;
  /** The `seq` of the last event folded in (0 for none). */
  readonly lastSeq: number;
  /** True while the last turn has not finished. */
  readonly running: boolean;
}

/** Why one value given to [`ConversationModel.push`] was not folded. */
export interface SkippedEvent {
  /** The event's `seq`, when it had one. */
  readonly seq?: number;
  /** What was wrong. */
  readonly message: string;
}

type Listener = () => void;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const EMPTY_USAGE: TurnUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, steps: 0 };

/**
 * A session's conversation, fed with its events in `seq` order (from a page of history, then
 * a live stream): an event at or below the last `seq` seen is dropped, so history and a
 * resumed stream can overlap without showing anything twice. The call tree is the protocol
 * package's fold; requests, usage and the session's facts are kept beside it.
 *
 * Subscribe with `useSyncExternalStore(model.subscribe, model.getSnapshot)`.
 */
export class ConversationModel {
  private readonly fold = foldEvents([]);
  private readonly listeners = new Set<Listener>();
  private readonly preparingListeners = new Map<string, Set<Listener>>();
  private readonly requestList: RequestState[] = [];
  private readonly requestIndex = new Map<string, number>();
  private readonly usageByTurn = new Map<string, TurnUsage>();
  private session: SessionFacts | undefined;
  private lastSeq = 0;
  private requestsChanged = true;
  private publishedRequests: readonly RequestState[] = [];
  private snapshot: ConversationSnapshot;
  /** Values that were not events, with why; for a diagnostic view. */
  readonly skipped: SkippedEvent[] = [];

  constructor() {
    this.snapshot = this.build();
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

  /** Hears changes of one call's raw argument text. */
  subscribePreparing = (callId: string, listener: Listener): (() => void) => {
    let set = this.preparingListeners.get(callId);
    if (set === undefined) {
      set = new Set();
      this.preparingListeners.set(callId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.preparingListeners.delete(callId);
    };
  };

  /** The `seq` of the last event folded in. */
  get seq(): number {
    return this.lastSeq;
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
      this.snapshot = this.build();
      this.listeners.forEach((listener) => listener());
      for (const callId of preparing) {
        this.preparingListeners.get(callId)?.forEach((listener) => listener());
      }
    }
    return changed;
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
      case 'request.opened':
        if (!this.requestIndex.has(event.requestId)) {
          this.requestIndex.set(event.requestId, this.requestList.length);
          const opened: RequestOpenedEvent = {
            requestId: event.requestId,
            callId: event.callId,
            toolName: event.toolName,
            ask: event.ask,
            ...(event.parentCallId === undefined ? {} : { parentCallId: event.parentCallId }),
          };
          this.requestList.push({ opened });
          this.requestsChanged = true;
        }
        break;
      case 'request.resolved': {
        const at = this.requestIndex.get(event.requestId);
        const current = at === undefined ? undefined : this.requestList[at];
        if (at !== undefined && current !== undefined) {
          this.requestList[at] = {
            ...current,
            resolution: event.resolution,
            resolvedBy: event.resolvedBy,
          };
          this.requestsChanged = true;
        }
        break;
      }
      case 'step.finished': {
        const before = this.usageByTurn.get(event.turnId) ?? EMPTY_USAGE;
        this.usageByTurn.set(event.turnId, {
          inputTokens: before.inputTokens + event.usage.inputTokens,
          outputTokens: before.outputTokens + event.usage.outputTokens,
          cacheReadTokens: before.cacheReadTokens + event.usage.cacheReadTokens,
          steps: before.steps + 1,
        });
        break;
      }
      default:
        break;
    }
  }

  private build(): ConversationSnapshot {
    const tree = this.fold.tree();
    const last = tree.turns[tree.turns.length - 1];
    if (this.requestsChanged) {
      // Views memoised on the list render again only when a request changed.
      this.publishedRequests = [...this.requestList];
      this.requestsChanged = false;
    }
    return {
      tree,
      ...(this.session === undefined ? {} : { session: this.session }),
      requests: this.publishedRequests,
      usage: new Map(this.usageByTurn),
      lastSeq: this.lastSeq,
      running: last !== undefined && last.turnId !== '' && last.finished === undefined,
    };
  }
}

/** Whether `node` is the call `callId` or holds it among its nested calls. */
export function containsCall(node: ToolNode, callId: string): boolean {
  if (node.callId === callId) return true;
  return node.subCalls.some((sub) => containsCall(sub, callId));
}

/** The requests that belong under a root call: its own and those of its nested calls. */
export function requestsOf(
  node: ToolNode,
  requests: readonly RequestState[],
): readonly RequestState[] {
  if (requests.length === 0) return NO_REQUESTS;
  const found = requests.filter(
    (request) =>
      containsCall(node, request.opened.callId) ||
      (request.opened.parentCallId !== undefined &&
        containsCall(node, request.opened.parentCallId)),
  );
  return found.length === 0 ? NO_REQUESTS : found;
}

const NO_REQUESTS: readonly RequestState[] = [];
