import type {
  AgentStartedEvent,
  CallerKind,
  CompactionNode,
  ContextCompactedEvent,
  Event,
  RequestOpenedEvent,
  RequestResolvedEvent,
  ReviewCircuitOpenEvent,
  ReviewGrant,
  Snapshot,
  ToolNode,
  ToolOutcome,
  ToolResultEvent,
  ToolStartEvent,
  TurnItem,
  TurnNode,
} from './generated';
import { LIVE_HEAD_BYTES, LIVE_TAIL_BYTES } from './generated';
import { requestOrigin } from './origin';

/** The conversation as the client renders it. */
export interface ConversationTree {
  /** The turns held, oldest first. */
  readonly turns: readonly TurnNode[];
  /**
   * The session's number (from 0) of the first turn held: how many earlier turns are not
   * loaded yet (0 for a fold of the whole log).
   */
  readonly firstTurn: number;
  /** The compactions, oldest first (the same array until one is added). */
  readonly compactions: readonly CompactionNode[];
  /**
   * A person's permissions for refused calls (`review.granted`), by call id: under the refused
   * call it allows and, once a retry used it, under that retry too (the same map until one
   * changes). Only those folded here: a fold seeded from a snapshot starts with none.
   */
  readonly grants: ReadonlyMap<string, ReviewGrant>;
  /** The turns the review circuit breaker paused (`review.circuit_open`), in log order. */
  readonly reviewPauses: readonly ReviewCircuitOpenEvent[];
}

/**
 * Where a call's node is: its turn (the session's number, not the position among the turns
 * held, so loading earlier turns moves no path), its item, then the sub-call indexes down from it.
 */
interface NodePath {
  turn: number;
  item: number;
  subs: number[];
}

/** Consecutive turns of a session, as the server's snapshot gives them. */
export type TurnPage = Pick<Snapshot, 'firstTurn' | 'turns'>;

/** The runtime's fold of a session's latest turns, to start a fold from (the server's snapshot). */
export type TreeSeed = Pick<Snapshot, 'firstTurn' | 'turns' | 'compactions' | 'preparingArguments'>;

/** A turn page that is not the runtime's JSON of a tree. */
export class TurnPageError extends Error {
  override readonly name = 'TurnPageError';
}

/** What one event changed. */
export interface FoldChange {
  /** True when the tree got a new snapshot. */
  tree: boolean;
  /** The call whose raw argument text changed (it grew, or went away at dispatch). */
  preparing?: string;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * The runtime's fold of an event log into the conversation tree, the same rules as
 * `qilin_protocol::ConversationTree` (its output for the recorded fixtures is checked against
 * the runtime's): a call is placed under its `parentCallId` when that call is known, else
 * as a root call of the current turn; `tool.preparing` argument text is kept beside the tree;
 * a result with no start still makes a node; `request.opened` makes its call wait and
 * `request.resolved` sets a waiting call running again; `agent.started` links the child session
 * an `agent` call started to its node (`child`); `tool.reviewed` puts the reviewer's judgement
 * on its call (`review`); each turn sums its steps' usage; `context.compacted` adds a compaction
 * after the turns so far. Beside the turns, as the runtime's tree does not hold them: a person's
 * grants for refused calls (`review.granted`) by call id, and the turns the review circuit
 * breaker paused (`review.circuit_open`).
 *
 * Snapshots are immutable and share every node an event did not touch. Objects created while
 * folding a batch are changed in place until the batch is published, so folding a whole log
 * costs no copies.
 */
export class ConversationFold {
  private turns: TurnNode[] = [];
  /** The session's number of `turns[0]`. */
  private first = 0;
  private compactions: readonly CompactionNode[] = [];
  private grants: ReadonlyMap<string, ReviewGrant> = new Map();
  private reviewPauses: readonly ReviewCircuitOpenEvent[] = [];
  private readonly index = new Map<string, NodePath>();
  private readonly preparing = new Map<string, string>();
  /** The UTF-8 sizes of each call's `progress` and `progressTail`, once live output came. */
  private readonly liveBytes = new Map<string, LiveBytes>();
  private drafts = new WeakSet<object>();
  private snapshot: ConversationTree = {
    turns: this.turns,
    firstTurn: 0,
    compactions: this.compactions,
    grants: this.grants,
    reviewPauses: this.reviewPauses,
  };

  /**
   * A fold that starts from the runtime's fold of a session's latest turns (the server's
   * snapshot, folded up to its `headSeq`): the events after it then fold exactly as they would
   * have into the whole log's fold. Throws a [`TurnPageError`] for a seed that is not a tree.
   */
  static seeded(seed: TreeSeed): ConversationFold {
    const fold = new ConversationFold();
    const turns = readPage(seed);
    if (!Array.isArray(seed.compactions)) throw new TurnPageError('`compactions` is not an array');
    if (!isRecord(seed.preparingArguments)) {
      throw new TurnPageError('`preparingArguments` is not an object of call ids');
    }
    fold.first = seed.firstTurn;
    fold.turns = turns;
    turns.forEach((turn, at) => fold.indexTurn(turn, seed.firstTurn + at));
    fold.compactions = [...seed.compactions];
    for (const [callId, text] of Object.entries(seed.preparingArguments)) {
      if (text !== undefined) fold.preparing.set(callId, text);
    }
    fold.publish();
    return fold;
  }

  /**
   * Puts a page of earlier turns (the runtime's JSON) before the turns held and publishes a new
   * snapshot; every node held keeps its identity. Turns the fold already holds are skipped; a
   * page that ends before the first turn held (a gap) is refused with a [`TurnPageError`], as
   * is one that is not a tree. Returns how many turns were added.
   */
  prepend(page: TurnPage): number {
    checkPage(page);
    if (page.firstTurn + page.turns.length < this.first) {
      throw new TurnPageError(
        `the page holds turns ${page.firstTurn} to ${page.firstTurn + page.turns.length - 1}, ` +
          `but the turn before ${this.first} is needed`,
      );
    }
    const missing = Math.max(0, Math.min(page.turns.length, this.first - page.firstTurn));
    if (missing === 0) return 0;
    const turns = readPage({ firstTurn: page.firstTurn, turns: page.turns.slice(0, missing) });
    turns.forEach((turn, at) => this.indexTurn(turn, page.firstTurn + at));
    this.turns = [...turns, ...this.turns];
    this.first = page.firstTurn;
    this.publish();
    return missing;
  }

  /** The current tree. */
  tree(): ConversationTree {
    return this.snapshot;
  }

  /** The raw argument text of a call still preparing; `undefined` once it is dispatched. */
  preparingArguments(callId: string): string | undefined {
    return this.preparing.get(callId);
  }

  /** Every call still preparing, with its raw argument text so far. */
  allPreparingArguments(): ReadonlyMap<string, string> {
    return this.preparing;
  }

  /** The node of a call, wherever it sits. */
  call(callId: string): ToolNode | undefined {
    const path = this.index.get(callId);
    return path === undefined ? undefined : this.nodeAt(path);
  }

  /** Folds one event and publishes a new snapshot if the tree changed. */
  apply(event: Event): FoldChange {
    const change = this.fold(event);
    if (change.tree) this.publish();
    return change;
  }

  /**
   * Folds many events and publishes one snapshot; returns whether the tree changed.
   * `onChange` hears what each event changed.
   */
  applyAll(events: Iterable<Event>, onChange?: (change: FoldChange) => void): boolean {
    let changed = false;
    for (const event of events) {
      const change = this.fold(event);
      onChange?.(change);
      changed = change.tree || changed;
    }
    if (changed) this.publish();
    return changed;
  }

  private publish(): void {
    this.snapshot = {
      turns: this.turns,
      firstTurn: this.first,
      compactions: this.compactions,
      grants: this.grants,
      reviewPauses: this.reviewPauses,
    };
    this.drafts = new WeakSet();
  }

  private fold(event: Event): FoldChange {
    switch (event.type) {
      case 'turn.started':
        this.writableTurns().push(this.draft(newTurn(event.turnId, event.prompt)));
        return { tree: true };
      case 'turn.finished': {
        if (this.turns.length === 0) return { tree: false };
        const last = this.first + this.turns.length - 1;
        const turn = this.writableTurn(last);
        turn.finished = event.reason;
        if (event.message === undefined) delete turn.message;
        else turn.message = event.message;
        return { tree: true };
      }
      case 'step.started':
        this.writableTurn(this.currentTurn()).latestStep = event.step;
        return { tree: true };
      case 'session.started':
      case 'step.reasoning.end':
        return { tree: false };
      case 'step.finished': {
        const turn = this.writableTurn(this.currentTurn());
        turn.usage = {
          inputTokens: turn.usage.inputTokens + event.usage.inputTokens,
          outputTokens: turn.usage.outputTokens + event.usage.outputTokens,
          cacheReadTokens: turn.usage.cacheReadTokens + event.usage.cacheReadTokens,
        };
        return { tree: true };
      }
      case 'step.text.delta':
        this.pushText('text', event.step, event.text);
        return { tree: true };
      case 'step.reasoning.delta':
        this.pushText('reasoning', event.step, event.text);
        return { tree: true };
      case 'request.opened':
        return { tree: this.open(event) };
      case 'request.resolved':
        return { tree: this.resolve(event) };
      case 'tool.preparing': {
        let tree = false;
        if (!this.index.has(event.callId)) {
          this.insert(this.newNode(event.callId, event.toolName, 'direct', undefined));
          tree = true;
        }
        const path = this.index.get(event.callId);
        if (path !== undefined && this.nodeAt(path)?.preparingAt === undefined) {
          this.update(path, (node) => {
            node.preparingAt = event.time;
          });
          tree = true;
        }
        this.preparing.set(
          event.callId,
          (this.preparing.get(event.callId) ?? '') + event.argumentsDelta,
        );
        return { tree, preparing: event.callId };
      }
      case 'tool.start':
        return { tree: true, ...this.start(event) };
      case 'tool.progress': {
        const path = this.index.get(event.callId);
        if (path === undefined) return { tree: false };
        this.update(path, (node) => {
          const bytes = this.liveBytes.get(event.callId) ?? {
            head: utf8Length(node.progress),
            tail: utf8Length(node.progressTail ?? ''),
          };
          this.liveBytes.set(event.callId, bytes);
          pushProgress(node, bytes, event.text, event.omittedBytes ?? 0);
        });
        return { tree: true };
      }
      case 'tool.result':
        return { tree: true, ...this.finish(event) };
      case 'agent.started':
        return { tree: this.linkChild(event) };
      case 'tool.reviewed': {
        const path = this.index.get(event.callId);
        if (path === undefined) return { tree: false };
        this.update(path, (node) => {
          node.review = event.review;
        });
        return { tree: true };
      }
      case 'review.granted': {
        const grants = new Map(this.grants);
        grants.set(event.grant.callId, event.grant);
        if (event.grant.usedBy !== undefined) grants.set(event.grant.usedBy, event.grant);
        this.grants = grants;
        return { tree: true };
      }
      case 'review.circuit_open': {
        const { turnId, denialsInARow, denialsInWindow, message } = event;
        this.reviewPauses = [
          ...this.reviewPauses,
          { turnId, denialsInARow, denialsInWindow, message },
        ];
        return { tree: true };
      }
      case 'context.compacted':
        this.compactions = [
          ...this.compactions,
          compactionNode(event, this.first + this.turns.length),
        ];
        return { tree: true };
      default:
        return { tree: false };
    }
  }

  private start(event: ToolStartEvent & { time: string }): { preparing?: string } {
    const wasPreparing = this.preparing.delete(event.callId);
    if (!this.index.has(event.callId)) {
      this.insert(this.newNode(event.callId, event.toolName, event.caller, event.parentCallId));
    }
    const path = this.index.get(event.callId);
    if (path !== undefined) {
      this.update(path, (node) => {
        node.caller = event.caller;
        setOptional(node, 'parentCallId', event.parentCallId);
        node.phase = 'running';
        node.startedAt = event.time;
        node.arguments = event.arguments;
        node.presentation = event.presentation;
        setOptional(node, 'beforeDetail', event.beforeDetail);
      });
    }
    return wasPreparing ? { preparing: event.callId } : {};
  }

  private finish(event: ToolResultEvent & { time: string }): { preparing?: string } {
    const wasPreparing = this.preparing.delete(event.callId);
    if (!this.index.has(event.callId)) {
      this.insert(this.newNode(event.callId, event.toolName, event.caller, event.parentCallId));
    }
    const path = this.index.get(event.callId);
    if (path !== undefined) {
      this.update(path, (node) => {
        node.phase = 'done';
        node.finishedAt = event.time;
        const outcome: Mutable<ToolOutcome> = {
          status: event.status,
          content: event.content,
          durationMs: event.durationMs,
        };
        setOptional(outcome, 'errorCode', event.errorCode);
        setOptional(outcome, 'userReason', event.userReason);
        setOptional(outcome, 'output', event.output);
        setOptional(outcome, 'detail', event.detail);
        node.outcome = outcome;
      });
    }
    return wasPreparing ? { preparing: event.callId } : {};
  }

  /** The child session an `agent` call started, on the call's node (its start came before). */
  private linkChild(event: AgentStartedEvent): boolean {
    const path = this.index.get(event.callId);
    if (path === undefined) return false;
    this.update(path, (node) => {
      node.child = {
        sessionId: event.childSessionId,
        agent: event.agent,
        description: event.description,
        ...(event.name === undefined ? {} : { name: event.name }),
        background: event.background,
      };
    });
    return true;
  }

  /**
   * A waiting call: its phase, and the request appended to its requests. A request a child's
   * call opened sits on the `agent` call that started the child, whose phase it leaves (a
   * background child's call has ended), and keeps which child it came from.
   */
  private open(event: RequestOpenedEvent & { time: string }): boolean {
    const path = this.index.get(event.callId);
    if (path === undefined) return false;
    const origin = requestOrigin(event);
    this.update(path, (node) => {
      if (origin.childSessionId === undefined) node.phase = 'waiting';
      node.requests = [
        ...node.requests,
        { requestId: event.requestId, ask: event.ask, openedAt: event.time, ...origin },
      ];
    });
    return true;
  }

  /** The request's answer recorded; a waiting call runs again. */
  private resolve(event: RequestResolvedEvent & { time: string }): boolean {
    const path = this.index.get(event.callId);
    if (path === undefined) return false;
    this.update(path, (node) => {
      node.requests = node.requests.map((request) =>
        request.requestId === event.requestId
          ? {
              ...request,
              resolution: event.resolution,
              resolvedBy: event.resolvedBy,
              resolvedAt: event.time,
            }
          : request,
      );
      if (node.phase === 'waiting') node.phase = 'running';
    });
    return true;
  }

  /** Appends streamed text or reasoning to the last item of the same kind and step. */
  private pushText(type: 'text' | 'reasoning', step: number, text: string): void {
    const turn = this.writableTurn(this.currentTurn());
    const items = turn.items as TurnItem[];
    const last = items[items.length - 1];
    if (last?.type === type && last.step === step) {
      items[items.length - 1] = { type, step, text: last.text + text };
      return;
    }
    items.push({ type, step, text });
  }

  /** Places a new node under its parent when the parent is known, else as a root call. */
  private insert(node: ToolNode): void {
    this.draft(node);
    const parentPath =
      node.parentCallId === undefined ? undefined : this.index.get(node.parentCallId);
    if (parentPath !== undefined) {
      let position = 0;
      this.update(parentPath, (parent) => {
        const subCalls = parent.subCalls as ToolNode[];
        subCalls.push(node);
        position = subCalls.length - 1;
      });
      this.index.set(node.callId, { ...parentPath, subs: [...parentPath.subs, position] });
      return;
    }
    const turnIndex = this.currentTurn();
    const items = this.writableTurn(turnIndex).items as TurnItem[];
    items.push({ type: 'tool', node });
    this.index.set(node.callId, { turn: turnIndex, item: items.length - 1, subs: [] });
  }

  /** A new node in the current turn's latest step, or in its parent's step for a nested call. */
  private newNode(
    callId: string,
    toolName: string,
    caller: CallerKind,
    parentCallId: string | undefined,
  ): ToolNode {
    const parent = parentCallId === undefined ? undefined : this.call(parentCallId);
    const step = parent === undefined ? this.turns[this.turns.length - 1]?.latestStep : parent.step;
    return {
      callId,
      toolName,
      caller,
      ...(parentCallId === undefined ? {} : { parentCallId }),
      ...(step === undefined ? {} : { step }),
      phase: 'preparing',
      progress: '',
      requests: [],
      subCalls: [],
    };
  }

  /** The number of the turn events belong to; a log that starts mid-turn gets an unnamed one. */
  private currentTurn(): number {
    if (this.turns.length === 0) {
      this.writableTurns().push(this.draft(newTurn('', '')));
    }
    return this.first + this.turns.length - 1;
  }

  /** Indexes every call of `turn` (the session's turn `number`), nested ones too. */
  private indexTurn(turn: TurnNode, number: number): void {
    const visit = (node: ToolNode, path: NodePath) => {
      this.index.set(node.callId, path);
      node.subCalls.forEach((sub, at) => visit(sub, { ...path, subs: [...path.subs, at] }));
    };
    turn.items.forEach((item, at) => {
      if (item.type === 'tool') visit(item.node, { turn: number, item: at, subs: [] });
    });
  }

  private nodeAt(path: NodePath): ToolNode | undefined {
    const item = this.turns[path.turn - this.first]?.items[path.item];
    if (item?.type !== 'tool') return undefined;
    let node: ToolNode | undefined = item.node;
    for (const sub of path.subs) node = node?.subCalls[sub];
    return node;
  }

  /** Changes the node at `path` through `change`, copying it and its ancestors once per batch. */
  private update(path: NodePath, change: (node: Mutable<ToolNode>) => void): void {
    const turn = this.writableTurn(path.turn);
    const items = turn.items as TurnItem[];
    const item = items[path.item];
    if (item?.type !== 'tool') return;
    const root = this.writableNode(item.node);
    if (root !== item.node) items[path.item] = { type: 'tool', node: root };
    let node = root;
    for (const sub of path.subs) {
      const subCalls = node.subCalls as ToolNode[];
      const child = subCalls[sub];
      if (child === undefined) return;
      const writable = this.writableNode(child);
      subCalls[sub] = writable;
      node = writable;
    }
    change(node);
  }

  private draft<T extends object>(value: T): T {
    this.drafts.add(value);
    return value;
  }

  private writableTurns(): TurnNode[] {
    if (!this.drafts.has(this.turns)) this.turns = this.draft([...this.turns]);
    return this.turns;
  }

  /** The turn of the session's `number`, writable for this batch. */
  private writableTurn(number: number): Mutable<TurnNode> {
    const turns = this.writableTurns();
    const turn = turns[number - this.first] as TurnNode;
    if (this.drafts.has(turn)) return turn;
    const copy = this.draft({ ...turn, items: this.draft([...turn.items]) });
    turns[number - this.first] = copy;
    return copy;
  }

  private writableNode(node: ToolNode): Mutable<ToolNode> {
    if (this.drafts.has(node)) return node;
    return this.draft({ ...node, subCalls: this.draft([...node.subCalls]) });
  }
}

/** The UTF-8 sizes of a node's live output: its start and its latest part. */
interface LiveBytes {
  head: number;
  tail: number;
}

/**
 * Folds one progress event into a node within the live bound, as the runtime's fold does
 * (`qilin_protocol::LiveView::push`), counting in UTF-8 bytes as it does: after a gap the tail
 * shown before and the gap are counted together and `text` starts the tail again; text that
 * overflows the head goes to the tail; a tail longer than its bound loses its start to the
 * count, cut on a character boundary.
 */
function pushProgress(
  node: Mutable<ToolNode>,
  bytes: LiveBytes,
  text: string,
  omittedBytes: number,
): void {
  const textBytes = utf8Length(text);
  let omitted = node.progressOmittedBytes ?? 0;
  let tail = node.progressTail ?? '';
  if (omittedBytes > 0) {
    omitted += bytes.tail + omittedBytes;
    tail = text;
    bytes.tail = textBytes;
  } else if (omitted === 0 && tail === '') {
    const fits = utf8Prefix(text, Math.max(0, LIVE_HEAD_BYTES - bytes.head), 'at most');
    node.progress += text.slice(0, fits.units);
    bytes.head += fits.bytes;
    tail = text.slice(fits.units);
    bytes.tail = textBytes - fits.bytes;
  } else {
    tail += text;
    bytes.tail += textBytes;
  }
  if (bytes.tail > LIVE_TAIL_BYTES) {
    const cut = utf8Prefix(tail, bytes.tail - LIVE_TAIL_BYTES, 'at least');
    tail = tail.slice(cut.units);
    bytes.tail -= cut.bytes;
    omitted += cut.bytes;
  }
  setOptional(node, 'progressOmittedBytes', omitted === 0 ? undefined : omitted);
  setOptional(node, 'progressTail', tail === '' ? undefined : tail);
}

/** The UTF-8 size of the character starting at UTF-16 index `at` of `text`, and its length there. */
function utf8Char(text: string, at: number): { bytes: number; units: number } {
  const code = text.charCodeAt(at);
  if (code < 0x80) return { bytes: 1, units: 1 };
  if (code < 0x800) return { bytes: 2, units: 1 };
  if (code >= 0xd800 && code <= 0xdbff) {
    const next = text.charCodeAt(at + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return { bytes: 4, units: 2 };
  }
  return { bytes: 3, units: 1 };
}

/** The size of `text` in UTF-8, as the runtime counts live output. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let at = 0; at < text.length;) {
    const char = utf8Char(text, at);
    bytes += char.bytes;
    at += char.units;
  }
  return bytes;
}

/**
 * The prefix of `text` ending on a character boundary that is the longest of `at most` `limit`
 * UTF-8 bytes, or the shortest of `at least` `limit`: its length in UTF-16 units and in bytes.
 */
function utf8Prefix(
  text: string,
  limit: number,
  kind: 'at most' | 'at least',
): { units: number; bytes: number } {
  let bytes = 0;
  let units = 0;
  while (units < text.length) {
    if (kind === 'at least' && bytes >= limit) break;
    const char = utf8Char(text, units);
    if (kind === 'at most' && bytes + char.bytes > limit) break;
    bytes += char.bytes;
    units += char.units;
  }
  return { units, bytes };
}

function compactionNode(
  event: ContextCompactedEvent & { seq: number },
  afterTurns: number,
): CompactionNode {
  return {
    seq: event.seq,
    afterTurns,
    summary: event.summary,
    usage: event.usage,
    estimatedTokensBefore: event.estimatedTokensBefore,
    estimatedTokensAfter: event.estimatedTokensAfter,
  };
}

function newTurn(turnId: string, prompt: string): TurnNode {
  return {
    turnId,
    prompt,
    items: [],
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0 },
  };
}

function setOptional<T extends object, K extends keyof T>(
  target: T,
  key: K,
  value: T[K] | undefined,
): void {
  if (value === undefined) Reflect.deleteProperty(target, key);
  else target[key] = value;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function checkPage(page: TurnPage): void {
  if (!Number.isSafeInteger(page.firstTurn) || page.firstTurn < 0) {
    throw new TurnPageError(`\`firstTurn\` is ${String(page.firstTurn)}; expected a turn number`);
  }
  if (!Array.isArray(page.turns)) throw new TurnPageError('`turns` is not an array');
}

/** The turns of a page in this client's shape, checked as they are converted. */
function readPage(page: TurnPage): TurnNode[] {
  checkPage(page);
  return page.turns.map((turn, at) => readTurn(turn, `turns[${page.firstTurn + at}]`));
}

/** A turn of the server's snapshot, checked to be one. */
function readTurn(raw: TurnNode, where: string): TurnNode {
  if (!isRecord(raw) || typeof raw.turnId !== 'string' || typeof raw.prompt !== 'string') {
    throw new TurnPageError(`${where} is not a turn (a \`turnId\` and a \`prompt\` string)`);
  }
  if (!Array.isArray(raw.items) || !isRecord(raw.usage)) {
    throw new TurnPageError(`${where} has no \`items\` array or no \`usage\``);
  }
  raw.items.forEach((item: TurnItem, at) => {
    const kind = isRecord(item) ? item.type : undefined;
    if (kind === 'tool' && item.type === 'tool') readNode(item.node, `${where}.items[${at}].node`);
    else if (kind !== 'text' && kind !== 'reasoning') {
      throw new TurnPageError(`${where}.items[${at}] is not a text, reasoning or tool item`);
    }
  });
  return raw;
}

/** A call of the server's snapshot and the calls under it, checked to be calls. */
function readNode(raw: ToolNode, where: string): void {
  if (!isRecord(raw) || typeof raw.callId !== 'string' || typeof raw.toolName !== 'string') {
    throw new TurnPageError(`${where} is not a call (a \`callId\` and a \`toolName\` string)`);
  }
  if (!Array.isArray(raw.subCalls) || !Array.isArray(raw.requests)) {
    throw new TurnPageError(`${where} has no \`subCalls\` or \`requests\` array`);
  }
  raw.subCalls.forEach((sub, at) => readNode(sub, `${where}.subCalls[${at}]`));
}

/** Folds a whole log at once. */
export function foldEvents(events: Iterable<Event>): ConversationFold {
  const fold = new ConversationFold();
  fold.applyAll(events);
  return fold;
}
