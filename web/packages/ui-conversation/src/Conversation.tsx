import { useT } from '@qilin-agent/i18n';
import {
  ANY_TOOL,
  REQUESTS_SLOT,
  ToolCallTree,
  type FileLines,
  type ToolCallRequestsProps,
} from '@qilin-agent/client-ui-tool';
import type {
  ReviewCircuitOpenEvent,
  ReviewGrant,
  TurnItem,
  TurnNode,
  Usage as TokenUsage,
} from '@qilin-agent/protocol';
import { Slot, type SlotRegistry } from '@qilin-agent/slots';
import {
  Fragment,
  createContext,
  memo,
  useCallback,
  useContext,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type ReactNode,
  type RefObject,
} from 'react';
import { CompactionDivider, compactionsAfter } from './Compaction';
import { MarkdownText } from '@qilin-agent/ui-primitives';
import type { ConversationSnapshot } from '@qilin-agent/protocol';
import { RequestCard, type AnswerRequest } from './Request';
import {
  ANCHOR_ATTRIBUTE,
  REVEALED_CLASS,
  anchored,
  firstAnchored,
  revealedElement,
  type RevealTarget,
} from './reveal';
import { CHAT_NODE_SLOT, type ChatNodeProps } from './slots';

/** What the host gives the transcript: where the session works and what it can do. */
export interface ConversationHost {
  /** The session's workspace, for shortening paths. */
  cwd?: string;
  /** The user's home folder. */
  home?: string;
  /** Opens a file in the host's preview. */
  openFile?: (path: string, lines?: FileLines) => void;
  /** Opens the host's view of one call. */
  inspect?: (callId: string) => void;
  /** Answers a request; without it, open requests show without working controls. */
  answer?: AnswerRequest;
  /**
   * Allows a call the reviewer model refused (the person's grant, and a turn that retries it);
   * rejects with an error whose message says why not. Without it, refused calls show no
   * "Allow this call" control.
   */
  allowCall?: (callId: string) => Promise<void>;
  /**
   * Calls a person allowed that the tree's grants may not show (the server's list of reviews:
   * a fold seeded from a snapshot sees only the grants made after it); they read "Allowed".
   */
  allowedCalls?: ReadonlySet<string>;
}

const HostContext = createContext<ConversationHost>({});

/** What the call trees know of a person's grants. */
interface Grants {
  /** The fold's grants, by call id. */
  readonly grants: ReadonlyMap<string, ReviewGrant>;
  /** Calls the host says a person allowed, beside them. */
  readonly allowed: ReadonlySet<string>;
}

const NO_GRANTS: Grants = { grants: new Map(), allowed: new Set() };

/** The grants, apart from the host so a new grant leaves the host's callbacks alone. */
const GrantsContext = createContext<Grants>(NO_GRANTS);

/** The built-in view of a step's text. */
function TextNode(props: ChatNodeProps) {
  if (props.item.type !== 'text') return null;
  return <MarkdownText text={props.item.text} />;
}

/** The built-in view of a root call: its tree, each request in place under its own call. */
function ToolNodeView(props: ChatNodeProps) {
  const host = useContext(HostContext);
  const { grants, allowed } = useContext(GrantsContext);
  if (props.item.type !== 'tool') return null;
  const node = props.item.node;
  return (
    <div className="qc-call">
      <ToolCallTree
        node={node}
        {...(host.cwd === undefined ? {} : { cwd: host.cwd })}
        {...(host.home === undefined ? {} : { home: host.home })}
        {...(host.openFile === undefined ? {} : { openFile: host.openFile })}
        {...(host.inspect === undefined ? {} : { inspect: host.inspect })}
        {...(host.allowCall === undefined ? {} : { allowCall: host.allowCall })}
        grants={grants}
        allowedCalls={allowed}
      />
    </div>
  );
}

/** The requests of one call (root or nested), answerable in place: the tree renders it. */
function CallRequestCards(props: ToolCallRequestsProps) {
  const host = useContext(HostContext);
  return (
    <div className="qc-requests">
      {props.requests.map((request) => (
        <RequestCard
          key={request.requestId}
          request={request}
          toolName={props.toolName}
          {...(host.answer === undefined ? {} : { answer: host.answer })}
        />
      ))}
    </div>
  );
}

/**
 * Registers the built-in node views (`text`, `tool`) and the request cards every call shows
 * under it (`tool.call.requests`, any tool); returns the function that removes them.
 */
export function registerConversationNodes(registry: SlotRegistry): () => void {
  const nodes = registry.inject(CHAT_NODE_SLOT, () => {
    const text = registry.register({ name: CHAT_NODE_SLOT, key: 'text' }, TextNode);
    const tool = registry.register({ name: CHAT_NODE_SLOT, key: 'tool' }, ToolNodeView);
    return () => {
      text();
      tool();
    };
  });
  const requests = registry.inject(REQUESTS_SLOT, () =>
    registry.register({ name: REQUESTS_SLOT, key: ANY_TOOL }, CallRequestCards),
  );
  return () => {
    nodes();
    requests();
  };
}

function UnknownNode() {
  return null;
}

/** One item, memoised: an event for another item never renders it again. */
const Item = memo(function Item(props: ChatNodeProps) {
  const key = props.item.type;
  return (
    <div className={`qc-item qc-item--${key}`} data-chat-node={key}>
      <Slot name={CHAT_NODE_SLOT} slotKey={key} fallback={UnknownNode} props={props} />
    </div>
  );
});

function Usage(props: { usage: TokenUsage }) {
  const t = useT();
  const { usage } = props;
  return (
    <span className="qc-turn__usage">
      {t('turn.usage', {
        input: usage.inputTokens,
        output: usage.outputTokens,
        cached: usage.cacheReadTokens,
      })}
    </span>
  );
}

function itemKey(item: TurnItem, index: number): string {
  return item.type === 'tool' ? `call:${item.node.callId}` : `text:${item.step}:${index}`;
}

/**
 * The notice of a turn the review circuit breaker paused: that auto review paused it, the
 * runtime's message, and the denials that tripped it.
 */
function ReviewPause(props: { pause: ReviewCircuitOpenEvent }) {
  const t = useT();
  const { pause } = props;
  return (
    <div className="qc-review-pause" role="note" data-review-pause={pause.turnId}>
      <p className="qc-review-pause__title">{t('review.paused')}</p>
      <p className="qc-review-pause__message">{pause.message}</p>
      <p className="qc-review-pause__counts">
        {t('review.pausedCounts', {
          inARow: pause.denialsInARow,
          inWindow: pause.denialsInWindow,
        })}
      </p>
    </div>
  );
}

/**
 * One turn: the prompt, the items, and how it ended; when the review circuit breaker paused it,
 * its notice before the end (whose message it then carries).
 */
const Turn = memo(function Turn(props: {
  turn: TurnNode;
  last: boolean;
  pause: ReviewCircuitOpenEvent | undefined;
}) {
  const t = useT();
  const { turn, pause } = props;
  return (
    <article
      className="qc-turn"
      data-turn-id={turn.turnId}
      data-chat-anchor-key={turn.turnId === '' ? undefined : `turn:${turn.turnId}`}
      data-turn-state={turn.finished ?? 'running'}
      aria-label={turn.prompt === '' ? undefined : turn.prompt.slice(0, 80)}
    >
      {turn.prompt === '' ? null : (
        <div className="qc-prompt">
          <span className="qc-visually-hidden">{t('turn.you')}: </span>
          <p className="qc-prompt__text">{turn.prompt}</p>
        </div>
      )}
      <div className="qc-turn__items">
        {turn.items.map((item, index) => (
          <Item key={itemKey(item, index)} item={item} />
        ))}
      </div>
      {pause === undefined ? null : <ReviewPause pause={pause} />}
      {turn.finished === undefined ? (
        props.last && turn.turnId !== '' ? (
          <p className="qc-turn__end qc-turn__end--running" role="status">
            {t('turn.running')}
          </p>
        ) : null
      ) : (
        <footer className={`qc-turn__end qc-turn__end--${turn.finished}`}>
          <span>{t(`turn.finished.${turn.finished}`)}</span>
          {turn.message === undefined || turn.message === pause?.message ? null : (
            <span className="qc-turn__message">{turn.message}</span>
          )}
          <Usage usage={turn.usage} />
        </footer>
      )}
    </article>
  );
});

/** Distance from the bottom, in pixels, under which the reader counts as at the bottom. */
const BOTTOM_SLACK = 48;

/** The offset of `element` from the top of `content`, in pixels. */
function offsetIn(content: Element, element: Element): number {
  return element.getBoundingClientRect().top - content.getBoundingClientRect().top;
}

/** Where the first anchored place of `content` (its first turn) is now. */
function firstTurnAnchor(scroller: HTMLElement, content: HTMLElement): Anchor | undefined {
  const first = firstAnchored(content);
  return first === undefined
    ? undefined
    : { key: first.key, offset: offsetIn(content, first.element), scrollTop: scroller.scrollTop };
}

/**
 * Where the first turn was: its anchor key (`data-chat-anchor-key`, by which it is found again
 * even when its element was rendered anew), its offset in the content, and the scroll offset.
 */
interface Anchor {
  readonly key: string;
  readonly offset: number;
  readonly scrollTop: number;
}

/**
 * Keeps a scroller at its bottom while content grows, only as long as the reader is there:
 * scrolling up stops it; scrolling back down (or the button) starts it again. And keeps the
 * reader's view still when earlier turns are put before the first one (`above`, the session's
 * number of the first turn, changes): the turn that was first stays where it was on screen, also
 * while the turns put above it take their real height (an off-screen turn's height is estimated
 * until it shows, `content-visibility`), until the reader scrolls.
 */
function useTranscriptScroll(above: number) {
  const scroller = useRef<HTMLDivElement>(null);
  const content = useRef<HTMLDivElement>(null);
  const stuck = useRef(true);
  /** The first turn where it was, as of the last scroll or change above it. */
  const anchor = useRef<Anchor | undefined>(undefined);
  /** The place held since the last change above it (its anchor key), and where on screen. */
  const held = useRef<{ key: string; onScreen: number } | undefined>(undefined);
  /** The scroll offset this hook set last, to tell its own scrolls from the reader's. */
  const own = useRef<number | undefined>(undefined);
  const [atBottom, setAtBottom] = useState(true);
  useLayoutEffect(() => {
    const element = scroller.current;
    const inner = content.current;
    if (element === null || inner === null) return;
    const onScroll = () => {
      if (own.current === undefined || Math.abs(element.scrollTop - own.current) >= 1) {
        // The reader scrolled: what they see now is theirs to keep.
        held.current = undefined;
      }
      own.current = undefined;
      const bottom =
        element.scrollHeight - element.scrollTop - element.clientHeight <= BOTTOM_SLACK;
      stuck.current = bottom;
      setAtBottom(bottom);
      anchor.current = firstTurnAnchor(element, inner);
    };
    const follow = () => {
      if (stuck.current) {
        element.scrollTop = element.scrollHeight;
        return;
      }
      const turn = held.current;
      const place = turn === undefined ? undefined : anchored(inner, turn.key);
      if (turn === undefined || place === undefined) return;
      const target = offsetIn(inner, place) - turn.onScreen;
      if (Math.abs(element.scrollTop - target) < 1) return;
      element.scrollTop = target;
      own.current = element.scrollTop;
      anchor.current = firstTurnAnchor(element, inner);
    };
    follow();
    element.addEventListener('scroll', onScroll, { passive: true });
    const observer = typeof ResizeObserver === 'undefined' ? undefined : new ResizeObserver(follow);
    observer?.observe(inner);
    return () => {
      element.removeEventListener('scroll', onScroll);
      observer?.disconnect();
    };
  }, []);
  useLayoutEffect(() => {
    const element = scroller.current;
    const inner = content.current;
    if (element === null || inner === null) return;
    const previous = anchor.current;
    // Found again by its key: the same place, whether or not its element was rendered anew.
    const place = previous === undefined ? undefined : anchored(inner, previous.key);
    if (previous !== undefined && place !== undefined && !stuck.current) {
      const onScreen = previous.offset - previous.scrollTop;
      held.current = { key: previous.key, onScreen };
      const target = offsetIn(inner, place) - onScreen;
      if (Math.abs(element.scrollTop - target) >= 1) {
        element.scrollTop = target;
        own.current = element.scrollTop;
      }
    }
    anchor.current = firstTurnAnchor(element, inner);
  }, [above]);
  const jump = () => {
    const element = scroller.current;
    if (element === null) return;
    stuck.current = true;
    held.current = undefined;
    setAtBottom(true);
    element.scrollTop = element.scrollHeight;
  };
  /**
   * Scrolls `target` to the middle of the view and keeps it there while the turns around it take
   * their real height, until the reader scrolls; the view stops following new output.
   */
  const reveal = useCallback((target: Element) => {
    const element = scroller.current;
    const inner = content.current;
    if (element === null || inner === null) return;
    stuck.current = false;
    setAtBottom(false);
    const middle = (element.clientHeight - target.getBoundingClientRect().height) / 2;
    element.scrollTop = Math.max(0, offsetIn(inner, target) - Math.max(0, middle));
    own.current = element.scrollTop;
    const key = target.getAttribute(ANCHOR_ATTRIBUTE);
    held.current =
      key === null ? undefined : { key, onScreen: offsetIn(inner, target) - element.scrollTop };
    anchor.current = firstTurnAnchor(element, inner);
  }, []);
  return { scroller, content, atBottom, jump, reveal };
}

/**
 * Brings `target`'s element into view and highlights it, once per target: as soon as the
 * transcript renders it (or, for a call folded away, the nearest call above it).
 */
function useReveal(
  target: RevealTarget | undefined,
  tree: ConversationSnapshot['tree'],
  content: RefObject<HTMLDivElement | null>,
  reveal: (element: Element) => void,
) {
  const done = useRef<RevealTarget | undefined>(undefined);
  const highlighted = useRef<Element | undefined>(undefined);
  useLayoutEffect(() => {
    const inner = content.current;
    if (target === undefined || done.current === target || inner === null) return;
    const element = revealedElement(inner, tree, target.anchor);
    if (element === undefined) return;
    done.current = target;
    highlighted.current?.classList.remove(REVEALED_CLASS);
    // Restarts the fade when the same element is revealed again (a style flush in between).
    element.classList.remove(REVEALED_CLASS);
    element.getBoundingClientRect();
    element.classList.add(REVEALED_CLASS);
    highlighted.current = element;
    reveal(element);
  }, [target, tree, content, reveal]);
}

/** How near the top of the transcript, in pixels, the reader must scroll to load earlier turns. */
const NEAR_TOP = 600;

/** Where loading the earlier turns stands. */
type EarlierState =
  | { readonly kind: 'idle' }
  | { readonly kind: 'loading' }
  | { readonly kind: 'failed'; readonly message: string };

/** Loads the earlier turns once at a time, with its state. */
function useEarlierTurns(load: (() => Promise<void>) | undefined) {
  const [state, setState] = useState<EarlierState>({ kind: 'idle' });
  const busy = useRef(false);
  const start = useCallback(() => {
    if (load === undefined || busy.current) return;
    busy.current = true;
    setState({ kind: 'loading' });
    load().then(
      () => {
        busy.current = false;
        setState({ kind: 'idle' });
      },
      (error: unknown) => {
        busy.current = false;
        setState({
          kind: 'failed',
          message: error instanceof Error ? error.message : String(error),
        });
      },
    );
  }, [load]);
  return { state, start };
}

/**
 * The control above the turns when earlier ones are not loaded yet: a button that loads the
 * previous page (started by itself when the reader scrolls near the top), its loading state, and
 * an error with a retry.
 */
function EarlierTurns(props: {
  count: number;
  state: EarlierState;
  start: () => void;
  root: RefObject<HTMLDivElement | null>;
}) {
  const t = useT();
  const { count, state, start, root } = props;
  const marker = useRef<HTMLDivElement>(null);
  // A new observer for every page and state: it reports at once whether the top is still near,
  // so a page too short to fill the screen is followed by the next.
  useEffect(() => {
    const element = marker.current;
    const area = root.current;
    if (state.kind !== 'idle' || element === null || area === null) return;
    if (typeof IntersectionObserver === 'undefined') return;
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((entry) => entry.isIntersecting)) start();
      },
      { root: area, rootMargin: `${NEAR_TOP}px 0px 0px 0px` },
    );
    observer.observe(element);
    return () => observer.disconnect();
  }, [count, state.kind, start, root]);
  // Once the last page is in, the control goes: focus it held moves to the transcript rather
  // than to the page's body.
  useLayoutEffect(
    () => () => {
      if (marker.current?.contains(document.activeElement) === true) {
        root.current?.focus({ preventScroll: true });
      }
    },
    [root],
  );
  return (
    <div ref={marker} className="qc-earlier" data-earlier-turns={count}>
      {state.kind === 'failed' ? (
        <div role="alert" className="qc-earlier__error">
          <span>{t('earlier.failed', { message: state.message })}</span>{' '}
          <button type="button" className="qc-button" onClick={start}>
            {t('earlier.retry')}
          </button>
        </div>
      ) : (
        <button
          type="button"
          className="qc-button qc-earlier__show"
          aria-disabled={state.kind === 'loading'}
          aria-busy={state.kind === 'loading'}
          onClick={start}
        >
          {state.kind === 'loading' ? t('earlier.loading') : t('earlier.show', { count })}
        </button>
      )}
    </div>
  );
}

/** The props of [`Conversation`]. */
export interface ConversationProps extends ConversationHost {
  /** The state to show. */
  snapshot: ConversationSnapshot;
  /**
   * Loads the page of turns before the first one shown (`snapshot.tree.firstTurn` of them are
   * not loaded); rejects with an error whose message says why it could not.
   */
  loadEarlier?: () => Promise<void>;
  /** Rendered after the last turn (the host's own status lines). */
  footer?: ReactNode;
  /**
   * A place to bring into view and highlight once it is rendered (the host loads the earlier
   * turns it is in); a new object reveals again.
   */
  reveal?: RevealTarget | undefined;
}

/**
 * The transcript of a session: every turn with its prompt, the model's text as Markdown, the
 * call trees through `ToolCallTree` (each item dispatched through `conversation.chat.node`),
 * pending requests in place under their call, "Allow this call" on a call the reviewer model
 * refused (with `allowCall`), the notice of a turn the review circuit breaker paused, how each
 * turn ended, and a divider where the conversation was compacted (the summary folded under it). Needs a
 * `SlotsProvider` whose registry has [`registerConversationNodes`] and the tool views.
 */
export function Conversation(props: ConversationProps) {
  const { snapshot, footer, cwd, home, openFile, inspect, answer, allowCall, allowedCalls } = props;
  const { loadEarlier, reveal } = props;
  // One host object while its parts stay the same: a new context value would make React walk
  // every call view of the transcript looking for readers, on every streamed event.
  const host = useMemo(
    (): ConversationHost => ({
      ...(cwd === undefined ? {} : { cwd }),
      ...(home === undefined ? {} : { home }),
      ...(openFile === undefined ? {} : { openFile }),
      ...(inspect === undefined ? {} : { inspect }),
      ...(answer === undefined ? {} : { answer }),
      ...(allowCall === undefined ? {} : { allowCall }),
    }),
    [cwd, home, openFile, inspect, answer, allowCall],
  );
  const pauses = usePausesByTurn(snapshot.tree.reviewPauses);
  const treeGrants = snapshot.tree.grants;
  const grants = useMemo(
    (): Grants => ({ grants: treeGrants, allowed: allowedCalls ?? NO_GRANTS.allowed }),
    [treeGrants, allowedCalls],
  );
  const t = useT();
  const { turns, firstTurn } = snapshot.tree;
  const earlier = useEarlierTurns(loadEarlier);
  const showEarlier = firstTurn > 0 && loadEarlier !== undefined;
  // The control above the turns keeps one height while it loads, so only a new first turn moves
  // what is below it.
  const scroll = useTranscriptScroll(firstTurn);
  const { scroller, content, atBottom, jump } = scroll;
  useReveal(reveal, snapshot.tree, content, scroll.reveal);
  return (
    <HostContext.Provider value={host}>
      <GrantsContext.Provider value={grants}>
        <div className="qc-transcript-wrap">
          <div
            ref={scroller}
            className="qc-transcript"
            role="log"
            aria-label={t('transcript.label')}
            aria-live="off"
            tabIndex={0}
          >
            <div ref={content} className="qc-transcript__content">
              {showEarlier ? (
                <EarlierTurns
                  count={firstTurn}
                  state={earlier.state}
                  start={earlier.start}
                  root={scroller}
                />
              ) : null}
              {turns.length === 0 ? <p className="qc-empty">{t('transcript.empty')}</p> : null}
              {turns.map((turn, index) => (
                <Fragment key={turn.turnId === '' ? `turn-${firstTurn + index}` : turn.turnId}>
                  <Turn
                    turn={turn}
                    last={index === turns.length - 1}
                    pause={pauses.get(turn.turnId)}
                  />
                  {compactionsAfter(snapshot.tree.compactions, firstTurn + index + 1).map(
                    (compaction) => (
                      <CompactionDivider
                        key={`compaction:${compaction.seq}`}
                        compaction={compaction}
                      />
                    ),
                  )}
                </Fragment>
              ))}
              {footer}
            </div>
          </div>
          {atBottom ? null : (
            <button type="button" className="qc-button qc-latest" onClick={jump}>
              {t('transcript.latest')}
            </button>
          )}
        </div>
      </GrantsContext.Provider>
    </HostContext.Provider>
  );
}

/** The last pause of each turn the review circuit breaker paused, by turn id. */
function usePausesByTurn(
  pauses: readonly ReviewCircuitOpenEvent[],
): ReadonlyMap<string, ReviewCircuitOpenEvent> {
  return useMemo(() => new Map(pauses.map((pause) => [pause.turnId, pause])), [pauses]);
}
