import type {
  AutoReviewRecord,
  CallStatus,
  CallerKind,
  ChildLink,
  ContentBlock,
  ConversationTree,
  ErrorCode,
  RequestNode,
  ReviewGrant,
  ToolNode,
} from '@qilin-agent/protocol';
import type { GalleryImage, ImageLoader } from '@qilin-agent/ui-primitives';
import type { ComponentType } from 'react';
import type { LoopRow } from './models/loops';

/** The slot every call's view is registered in, keyed by the tool's wire name. */
export const TOOL_VIEW_SLOT = 'tool.call.toolview';

/** The slot of the image gallery a call's result shows, keyed by the tool's wire name. */
export const IMAGES_SLOT = 'tool.call.images';

/**
 * The slot of what a call shows under its card about the requests it opened, keyed by the
 * tool's wire name, then [`ANY_TOOL`]; without a view, the read-only notes. A host that can
 * answer requests registers its controls here, so each request shows under the very call that
 * waits, nested calls included.
 */
export const REQUESTS_SLOT = 'tool.call.requests';

/** The key of a view that answers for every tool in a keyed slot. */
export const ANY_TOOL = '*';

/** Lines of a file a call touched, numbered from 1, both ends included. */
export interface FileLines {
  /** The first line. */
  readonly first: number;
  /** The last line. */
  readonly last: number;
}

/** What the host gives every view: where the session works and what it can open. */
export interface ToolCallHost {
  /** The session's working folder; paths in summaries are shortened against it. */
  cwd?: string;
  /** The user's home folder (POSIX); a path left outside `cwd` is shortened to `~/…`. */
  home?: string;
  /**
   * Opens a file (the host's preview); it always gets the path as the call gave it, and the
   * lines the call read or changed when the card knows them.
   */
  openFile?: (path: string, lines?: FileLines) => void;
  /** Opens the host's view of a whole call (its events, its raw data). */
  inspect?: (callId: string) => void;
  /**
   * Allows a call the reviewer model refused (or could not judge): the person's grant for
   * exactly that call, and a turn that lets the model run it again. Resolves once the grant is
   * made; rejects with an error whose message says why it was not. Without it, a refused call
   * shows no "Allow this call" control.
   */
  allowCall?: (callId: string) => Promise<void>;
  /** Turns an image of a result into an address an `<img>` can show. */
  loadImage: ImageLoader;
}

/**
 * A dispatched call's final data: what `tool.start` recorded, and the live output since. Only
 * raw event fields: the text a tool's server-side display methods wrote (its presentation
 * and details) never reaches a view.
 */
export interface StartBlock {
  /** The arguments as recorded: any JSON value (the raw text, when the model's was not JSON). */
  readonly arguments: unknown;
  /** Which entry the call came through. */
  readonly caller: CallerKind;
  /** The `run_code` call that made this call, for a code-mode call. */
  readonly parentCallId?: string;
  /** Live output so far: all of it, or its start when `progressGap` follows. */
  readonly progress: string;
  /** Live output the runtime left out after `progress` (it bounds a call's live output), and the latest output after it. */
  readonly progressGap?: LiveGap;
  /** The requests the call opened (an approval, questions), in order, answered or not. */
  readonly requests: readonly RequestNode[];
  /** The request the call waits on, while a person has not answered it. */
  readonly pending?: RequestNode;
  /** The child session the call started (`agent`), once the runtime created it. */
  readonly child?: ChildLink;
  /** The reviewer model's judgement of the call (`tool.reviewed`), when it was reviewed. */
  readonly review?: AutoReviewRecord;
  /**
   * A person's grant for the call: the permission they gave after it was refused, or, on the
   * retry that used it, the permission it ran by.
   */
  readonly grant?: ReviewGrant;
}

/** Live output left out of a call's live view, and the latest output after it. */
export interface LiveGap {
  /** Bytes of output not shown live (the call's result holds them). */
  readonly omittedBytes: number;
  /** The latest live output after them. */
  readonly tail: string;
}

/** How a call ended, as `tool.result` recorded it. */
export interface ResultBlock {
  /** Ok, error, denied or interrupted. */
  readonly status: CallStatus;
  /** Why it failed, when it did. */
  readonly errorCode?: ErrorCode;
  /** What the model saw. */
  readonly content: readonly ContentBlock[];
  /** For a denied call, the reason for the person watching (the model's message is `content`). */
  readonly userReason?: string;
  /** The tool's structured output, when it ran to completion. */
  readonly output?: unknown;
  /** Wall time in milliseconds. */
  readonly durationMs: number;
}

interface ViewIdentity extends ToolCallHost {
  /** The call's id, the same through every phase. */
  readonly callId: string;
  /** The tool's wire name. */
  readonly toolName: string;
}

/** A call whose arguments are still streaming: only its identity, never its arguments. */
export interface PreparingToolCallViewProps extends ViewIdentity {
  /** The phase. */
  readonly phase: 'preparing';
}

/** A dispatched call, running or ended. */
export type StartedToolCallViewProps = ViewIdentity & {
  /** How many calls its code has made (they render under it). */
  readonly subCallCount: number;
  /** What `tool.start` recorded. */
  readonly start: StartBlock;
} & (
    | { readonly phase: 'start' }
    | {
        readonly phase: 'result';
        /** What `tool.result` recorded. */
        readonly result: ResultBlock;
      }
  );

/** The props of a view in [`TOOL_VIEW_SLOT`]: one explicit variant per phase. */
export type ToolCallOwnerProps = PreparingToolCallViewProps | StartedToolCallViewProps;

/** The props of a view in [`IMAGES_SLOT`]. */
export interface ToolCallImagesProps {
  /** The images of the call's result. */
  images: readonly GalleryImage[];
  /** The session's image loader. */
  loadImage: ImageLoader;
}

/** The props of a view in [`REQUESTS_SLOT`]. */
export interface ToolCallRequestsProps {
  /** The call that opened the requests. */
  readonly callId: string;
  /** Its tool's wire name. */
  readonly toolName: string;
  /** The `run_code` call that made it, for a code-mode call. */
  readonly parentCallId?: string;
  /** The requests, in order, answered or not (never empty). */
  readonly requests: readonly RequestNode[];
  /** The request the call waits on, while a person has not answered it. */
  readonly pending?: RequestNode;
}

/** The hooks every tool view may call, provided by the host's conversation store. */
export interface ToolCallHooks {
  /**
   * The raw argument text streamed so far for a call still preparing; `""` when there is
   * none. Subscribes only when called; a view re-renders only when the text changes; after
   * dispatch it stays `""`.
   */
  useToolCallArgumentsPartial: (callId: string) => string;
  /** The last call of `toolName` before `callId` in the session that ended `ok`. */
  usePreviousToolCall: (callId: string, toolName: string) => ToolNode | undefined;
}

/** Where the host's following of a child session stands. */
export type ChildFeedStatus = 'connecting' | 'live' | 'reconnecting' | 'ended';

/** A child session as the host follows it: its conversation as it grows, and hooks over it. */
export interface ChildSessionFeed {
  /** Where the host's stream of the child stands (`ended`: the child session is gone). */
  readonly status: ChildFeedStatus;
  /** The child's conversation: the runtime's fold of its log, a new tree at each change. */
  readonly tree: ConversationTree;
  /** The tool hooks over the child's own store, for the child's cards. */
  readonly hooks: ToolCallHooks;
}

/**
 * Follows a child session while a card shows its calls: given a session id, the host reads the
 * child (its snapshot, then its live events) and returns what it has so far (`undefined` before
 * anything came); given `undefined`, it follows nothing. The host closes what it opened when
 * the id changes or the card unmounts, so a page holds one subscription per child shown.
 */
export type UseChildSession = (sessionId: string | undefined) => ChildSessionFeed | undefined;

/** What the host shares with every tool view through the slot system. */
export interface ToolCallShared extends ToolCallHooks {
  /** Host data for every tree; a `ToolCallTree`'s own props take precedence. */
  host?: Partial<ToolCallHost>;
  /**
   * Follows a child session for the `agent` card, which then shows the child's calls live;
   * without it the card shows the link to the child session only.
   */
  useChildSession?: UseChildSession;
  /**
   * A loop as the host follows it (the session's `loop.*` events folded by loop id): the
   * `loop_start` card then shows it live; without it the card shows the record its call
   * returned.
   */
  useLoop?: UseLoop;
  /**
   * Renders Markdown the way the host renders the model's text (a workflow's report
   * sections); without it the text shows as it is.
   */
  markdown?: ComponentType<{ text: string }>;
}

/**
 * A loop as the host knows it now: the record a call returned with everything the host has
 * heard of the same loop since folded in (the record itself when it heard nothing).
 */
export type UseLoop = (known: LoopRow) => LoopRow;

declare module '@qilin-agent/slots' {
  interface SlotPropsMap {
    'tool.call.toolview': ToolCallOwnerProps;
    'tool.call.images': ToolCallImagesProps;
    'tool.call.requests': ToolCallRequestsProps;
  }
  interface SlotShared {
    tool: ToolCallShared;
  }
}
