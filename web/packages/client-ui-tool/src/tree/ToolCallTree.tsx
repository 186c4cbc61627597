import { useT } from '@qilin-agent/i18n';
import type { RequestNode, ReviewGrant, ToolNode } from '@qilin-agent/protocol';
import { useSlotView } from '@qilin-agent/slots';
import { inlineImageLoader, type ImageLoader } from '@qilin-agent/ui-primitives';
import {
  Component,
  createContext,
  memo,
  useContext,
  useMemo,
  useState,
  type ComponentType,
  type ErrorInfo,
  type ReactNode,
} from 'react';
import { cardInput, isReviewRefusal } from '../models/common';
import { deniedModel } from '../models/denied';
import { genericModel } from '../models/generic';
import { reviewMark } from '../models/review';
import {
  ANY_TOOL,
  REQUESTS_SLOT,
  TOOL_VIEW_SLOT,
  type ResultBlock,
  type StartBlock,
  type ToolCallHost,
  type ToolCallRequestsProps,
  type ToolCallOwnerProps,
} from '../slots';
import { DeniedCard, GenericCard, useToolHooks } from '../views/card';
import { GenericToolView } from '../views/generic';
import { RequestNotes } from '../views/request';
import { ReviewMarkContext } from '../views/review';

/** The props of [`ToolCallTree`]. */
export interface ToolCallTreeProps {
  /** One root call, with its nested calls in `subCalls`. */
  node: ToolNode;
  /** The session's working folder (paths in summaries are shortened against it). */
  cwd?: string;
  /** The user's home folder (a path outside `cwd` is shortened to `~/…`). */
  home?: string;
  /** Opens a file in the host's preview; gets the path exactly as the call gave it. */
  openFile?: (path: string) => void;
  /** Opens the host's view of a call. */
  inspect?: (callId: string) => void;
  /** Loads a result's image; inline images load without one. */
  loadImage?: ImageLoader;
  /**
   * Allows a call the reviewer model refused; without it, refused calls show no "Allow this
   * call" control. Resolves once allowed, rejects with an error whose message says why not.
   */
  allowCall?: (callId: string) => Promise<void>;
  /** A person's grants for refused calls, by call id (the conversation tree's `grants`). */
  grants?: ReadonlyMap<string, ReviewGrant>;
  /**
   * Calls a person allowed that `grants` may not hold (the server's list of reviews, for grants
   * made before the fold started): their denial cards read "Allowed".
   */
  allowedCalls?: ReadonlySet<string>;
}

const HostContext = createContext<ToolCallHost>({ loadImage: inlineImageLoader });

const NO_GRANTS: ReadonlyMap<string, ReviewGrant> = new Map();

/** The grants of the tree's calls, by call id. */
const GrantsContext = createContext<ReadonlyMap<string, ReviewGrant>>(NO_GRANTS);

const NO_CALLS: ReadonlySet<string> = new Set();

/** Calls the host says a person allowed, beside the grants. */
const AllowedContext = createContext<ReadonlySet<string>>(NO_CALLS);

/** The view of a call that shows its denial: it comes before any view chosen by tool name. */
function DeniedView(props: ToolCallOwnerProps) {
  const listed = useContext(AllowedContext).has(props.callId);
  const model = useMemo(() => {
    const built = deniedModel(cardInput(props));
    return listed && !built.allowed ? { ...built, allowed: true } : built;
  }, [props, listed]);
  return <DeniedCard model={model} callId={props.callId} host={props} />;
}

/** What a card shows when it throws: the generic card, from the raw fields only. */
class CardBoundary extends Component<
  { props: ToolCallOwnerProps; children: ReactNode },
  { failed: boolean }
> {
  override state = { failed: false };

  static getDerivedStateFromError(): { failed: boolean } {
    return { failed: true };
  }

  override componentDidCatch(error: unknown, info: ErrorInfo): void {
    // A card that cannot render its data is a bug in the card, shown as the generic row;
    // the console keeps the trace for whoever fixes it.
    console.error(`the card of call ${this.props.props.callId} failed`, error, info.componentStack);
  }

  override componentDidUpdate(previous: { props: ToolCallOwnerProps }): void {
    if (this.state.failed && previous.props !== this.props.props) this.setState({ failed: false });
  }

  override render(): ReactNode {
    if (!this.state.failed) return this.props.children;
    const view = this.props.props;
    return <GenericCard model={genericModel(cardInput(view))} callId={view.callId} host={view} />;
  }
}

/** The last request of a call that has no answer yet. */
function openRequest(requests: readonly RequestNode[]): RequestNode | undefined {
  return requests.findLast((request) => request.resolution === undefined);
}

/** A view's props from a node, rebuilt only when the call's own data changed. */
function useViewProps(
  node: ToolNode,
  host: ToolCallHost,
  grant: ReviewGrant | undefined,
): ToolCallOwnerProps {
  const { callId, toolName, phase, caller, parentCallId, outcome, requests, review } = node;
  const { progressOmittedBytes: omittedBytes, progressTail: tail } = node;
  // Output past the live start with nothing left out follows on from it.
  const progress = omittedBytes === undefined ? node.progress + (tail ?? '') : node.progress;
  const args = node.arguments;
  const child = node.child;
  const subCallCount = node.subCalls.length;
  return useMemo((): ToolCallOwnerProps => {
    const base = { ...host, callId, toolName };
    if (phase === 'preparing') return { ...base, phase: 'preparing' };
    const pending = phase === 'waiting' ? openRequest(requests) : undefined;
    const start: StartBlock = {
      arguments: args,
      caller,
      progress,
      ...(omittedBytes === undefined ? {} : { progressGap: { omittedBytes, tail: tail ?? '' } }),
      requests,
      ...(pending === undefined ? {} : { pending }),
      ...(parentCallId === undefined ? {} : { parentCallId }),
      ...(child === undefined ? {} : { child }),
      ...(review === undefined ? {} : { review }),
      ...(grant === undefined ? {} : { grant }),
    };
    if (outcome === undefined) return { ...base, phase: 'start', start, subCallCount };
    const result: ResultBlock = {
      status: outcome.status,
      content: outcome.content,
      durationMs: outcome.durationMs,
      ...(outcome.errorCode === undefined ? {} : { errorCode: outcome.errorCode }),
      ...(outcome.userReason === undefined ? {} : { userReason: outcome.userReason }),
      ...(outcome.output === undefined ? {} : { output: outcome.output }),
    };
    return { ...base, phase: 'result', start, result, subCallCount };
  }, [
    host,
    callId,
    toolName,
    phase,
    caller,
    parentCallId,
    progress,
    omittedBytes,
    tail,
    outcome,
    requests,
    args,
    child,
    review,
    grant,
    subCallCount,
  ]);
}

const memoised = new WeakMap<
  ComponentType<ToolCallOwnerProps>,
  ComponentType<ToolCallOwnerProps>
>();

/** A view that renders again only when its props change. */
function memoView(view: ComponentType<ToolCallOwnerProps>): ComponentType<ToolCallOwnerProps> {
  let wrapped = memoised.get(view);
  if (wrapped === undefined) {
    wrapped = memo(view);
    memoised.set(view, wrapped);
  }
  return wrapped;
}

const MemoDenied = memoView(DeniedView);
const MemoGeneric = memoView(GenericToolView);

/** How many nested calls of a finished call show before "Show N more". */
const SHOWN_WHEN_DONE = 3;

/**
 * The nested calls shown: every one while the call runs (or once the reader expanded them);
 * once it ended, the first [`SHOWN_WHEN_DONE`] and every one that did not end `ok` (a failure
 * is never hidden), unless that would hide only one.
 */
function shownCalls(node: ToolNode, expanded: boolean): readonly ToolNode[] {
  const calls = node.subCalls;
  if (expanded || node.phase !== 'done' || calls.length <= SHOWN_WHEN_DONE + 1) return calls;
  const shown = calls.filter(
    (sub, index) => index < SHOWN_WHEN_DONE || sub.outcome?.status !== 'ok',
  );
  return calls.length - shown.length > 1 ? shown : calls;
}

/**
 * What a call shows about its requests: the view registered in `tool.call.requests` for its
 * tool (or for any tool), else the read-only notes.
 */
function CallRequests(props: { node: ToolNode; props: ToolCallOwnerProps }) {
  const { node } = props;
  const own = useSlotView(REQUESTS_SLOT, node.toolName);
  const any = useSlotView(REQUESTS_SLOT, ANY_TOOL);
  const pending = props.props.phase === 'preparing' ? undefined : props.props.start.pending;
  const requestProps = useMemo(
    (): ToolCallRequestsProps => ({
      callId: node.callId,
      toolName: node.toolName,
      ...(node.parentCallId === undefined ? {} : { parentCallId: node.parentCallId }),
      requests: node.requests,
      ...(pending === undefined ? {} : { pending }),
    }),
    [node.callId, node.toolName, node.parentCallId, node.requests, pending],
  );
  if (node.requests.length === 0) return null;
  const View = own ?? any ?? RequestNotes;
  // eslint-disable-next-line react-hooks/static-components -- the view is the slot's registration
  return <View {...requestProps} />;
}

/**
 * One call and the calls under it. Memoised on the node: a snapshot where this call did not
 * change (nor any call under it) does not render it again.
 */
const ToolCallBranch = memo(function ToolCallBranch(props: { node: ToolNode; nested: boolean }) {
  const t = useT();
  const { node, nested } = props;
  const host = useContext(HostContext);
  const grant = useContext(GrantsContext).get(node.callId);
  const [expanded, setExpanded] = useState(false);
  const shown = shownCalls(node, expanded);
  const hidden = node.subCalls.length - shown.length;
  const viewProps = useViewProps(node, host, grant);
  const { callId, review, outcome } = node;
  const mark = useMemo(
    () => reviewMark({ callId, review, outcome, grant }),
    [callId, review, outcome, grant],
  );
  const registered = useSlotView(TOOL_VIEW_SLOT, node.toolName);
  const View = isReviewRefusal(node.outcome)
    ? MemoDenied
    : registered === undefined
      ? MemoGeneric
      : memoView(registered);
  const Wrapper = nested ? 'li' : 'div';
  return (
    <Wrapper
      className="qt-call"
      data-chat-anchor-key={`call:${node.callId}`}
      data-chat-call-id={node.callId}
    >
      <ReviewMarkContext.Provider value={mark}>
        <CardBoundary props={viewProps}>
          {/* eslint-disable-next-line react-hooks/static-components -- the view is the slot's
              registration for this tool, memoised once per registered component (memoView). */}
          <View {...viewProps} />
        </CardBoundary>
      </ReviewMarkContext.Provider>
      <CallRequests node={node} props={viewProps} />
      {node.subCalls.length > 0 && (
        <ol
          className="qt-call__children"
          aria-label={t('row.nestedCalls', { title: node.toolName })}
        >
          {shown.map((sub) => (
            <ToolCallBranch key={sub.callId} node={sub} nested />
          ))}
        </ol>
      )}
      {hidden > 0 || expanded ? (
        <button
          type="button"
          className="qp-button qt-call__more"
          aria-expanded={hidden === 0}
          onClick={() => setExpanded(hidden > 0)}
        >
          {hidden > 0 ? t('row.moreCalls', { count: hidden }) : t('row.fewerCalls')}
        </button>
      ) : null}
    </Wrapper>
  );
});

/**
 * One root call and every call under it, each rendered through the `tool.call.toolview` slot
 * by its wire tool name (the generic card when no view is registered; the denial card first
 * for a call review refused, with "Allow this call" when the reviewer model refused it and the
 * host gives `allowCall`), with what the `tool.call.requests` slot shows under the
 * card about the requests the call opened (by default, notes on the wait for a person's approval
 * or answers). A call review let run shows a quiet mark on its row. Every call's wrapper carries
 * `data-chat-anchor-key="call:<id>"` and `data-chat-call-id`.
 *
 * Host data comes from the props, then from the slot's shared `tool.host`. Pass stable
 * callbacks: a new function each render renders every card again.
 */
export const ToolCallTree = memo(function ToolCallTree(props: ToolCallTreeProps) {
  const shared = useToolHooks().host;
  const { cwd, home, openFile, inspect, loadImage, allowCall } = props;
  const host = useMemo((): ToolCallHost => {
    const pick = <K extends keyof ToolCallHost>(key: K, own: ToolCallHost[K] | undefined) =>
      own !== undefined
        ? { [key]: own }
        : shared?.[key] !== undefined
          ? { [key]: shared[key] }
          : {};
    return {
      loadImage: loadImage ?? shared?.loadImage ?? inlineImageLoader,
      ...pick('cwd', cwd),
      ...pick('home', home),
      ...pick('openFile', openFile),
      ...pick('inspect', inspect),
      ...pick('allowCall', allowCall),
    };
  }, [shared, cwd, home, openFile, inspect, loadImage, allowCall]);
  return (
    <HostContext.Provider value={host}>
      <GrantsContext.Provider value={props.grants ?? NO_GRANTS}>
        <AllowedContext.Provider value={props.allowedCalls ?? NO_CALLS}>
          <div className="qt-tree">
            <ToolCallBranch node={props.node} nested={false} />
          </div>
        </AllowedContext.Provider>
      </GrantsContext.Provider>
    </HostContext.Provider>
  );
});
