import {
  ConversationFold,
  readEventLog,
  type ConversationTree,
  type Phase,
  type ToolNode,
} from '@qilin-agent/protocol';

/** Where the recorded sessions ran (the fixture generator writes this path for the workspace). */
export const FIXTURE_CWD = '/home/qilin/workspace';
/** The home folder the gallery assumes, so that paths outside the workspace show `~`. */
export const FIXTURE_HOME = '/home/qilin';

/** One card in one state: a call at one phase, shown in its root call's tree of that moment. */
export interface GalleryCase {
  /** A stable id: `fixture/callId/phase`. */
  id: string;
  /** The log it comes from. */
  fixture: string;
  /** The call. */
  callId: string;
  /** Its tool. */
  toolName: string;
  /** Its phase at that moment. */
  phase: Phase;
  /** How it ended, at the `done` phase. */
  status?: string;
  /** The root call's node at that moment. */
  root: ToolNode;
  /** The whole tree at that moment (for the previous todo list). */
  tree: ConversationTree;
  /** The raw argument text of calls still preparing at that moment. */
  preparing: ReadonlyMap<string, string>;
}

/** A log's working folder: its `session.started` event's `workspace`, else the fixtures'. */
export function workspaceOf(source: string): string {
  const started = readEventLog(source).events.find((event) => event.type === 'session.started');
  return started?.type === 'session.started' ? started.workspace : FIXTURE_CWD;
}

function rootOf(fold: ConversationFold, node: ToolNode): ToolNode {
  let current = node;
  while (current.parentCallId !== undefined) {
    const parent = fold.call(current.parentCallId);
    if (parent === undefined) break;
    current = parent;
  }
  return current;
}

/**
 * Every call of a log at every phase it went through, in order: the log replayed event by
 * event, a case taken each time a call reached a new phase; a call in flight is taken as it
 * was last in that phase (its whole argument text, its whole live output).
 */
export function casesOf(fixture: string, source: string): GalleryCase[] {
  const fold = new ConversationFold();
  const seen = new Map<string, Phase>();
  const cases = new Map<string, GalleryCase>();
  for (const event of readEventLog(source).events) {
    fold.apply(event);
    // A call's phase changes with its own events and with the requests it opens.
    const ownEvent = event.type.startsWith('tool.') || event.type.startsWith('request.');
    if (!ownEvent || !('callId' in event)) continue;
    const node = fold.call(event.callId);
    if (node === undefined) continue;
    const before = seen.get(node.callId);
    // A call in flight is shown as it was last (all its argument text, all its live output).
    if (before === node.phase && node.phase === 'done') continue;
    seen.set(node.callId, node.phase);
    const id = `${fixture}/${node.callId}/${node.phase}`;
    cases.set(id, {
      id,
      fixture,
      callId: node.callId,
      toolName: node.toolName,
      phase: node.phase,
      ...(node.outcome === undefined ? {} : { status: node.outcome.status }),
      root: rootOf(fold, node),
      tree: fold.tree(),
      preparing: new Map(fold.allPreparingArguments()),
    });
  }
  return [...cases.values()];
}
