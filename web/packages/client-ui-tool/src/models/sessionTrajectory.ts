import { message, type Message } from '@qilin-agent/i18n';
import type { CallState } from '@qilin-agent/ui-primitives';
import { Fields, Unsupported, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';
import { sessionHref } from './sessionLink';

/** The kinds of node a trajectory has. */
export const TRAJECTORY_KINDS = ['turn', 'call', 'text', 'request'] as const;

/** What a trajectory node is. */
export type TrajectoryKind = (typeof TRAJECTORY_KINDS)[number];

/** How a recorded call (or turn) ended, or that it still ran. */
const NODE_STATUSES = ['ok', 'error', 'denied', 'interrupted', 'running'] as const;

/** One node of a trajectory, with the nodes under it. */
export interface TrajectoryRow {
  /** Its indentation: 0 at the top, a nested node one more than the node it is under. */
  readonly depth: number;
  /** What it is. */
  readonly kind: TrajectoryKind;
  /** Its turn, when it has one. */
  readonly turn?: number;
  /** Its call, for a call (or a request a call opened). */
  readonly callId?: string;
  /** That call's tool. */
  readonly tool?: string;
  /** How it ended (or that it still ran), when it says. */
  readonly status?: CallState;
  /** Its one line. */
  readonly summary: string;
  /** When it started (RFC 3339 UTC; shown in the viewer's time zone). */
  readonly startedAt?: string;
  /** How long it took. */
  readonly durationMs?: number;
  /** The page's address of the session opened at its call. */
  readonly href?: string;
  /** The nodes one level deeper, until the next node at its depth or above. */
  readonly children: readonly TrajectoryRow[];
}

/** The card of a `session_trajectory` call. */
export interface SessionTrajectoryModel {
  readonly kind: 'sessionTrajectory';
  readonly state: CallState;
  /** The session asked about (its title once the result names it), for the row. */
  readonly summary?: string;
  /** How many nodes, for the row. */
  readonly suffix?: Message;
  /** What the trajectory covers: the whole session, one turn or one call. */
  readonly scope?: Message;
  /** The nodes at the top, each with the nodes under it. */
  readonly roots?: readonly TrajectoryRow[];
  /** Set when the tree was cut at the limit: the whole text is at `spill`, when it says. */
  readonly cut?: { readonly spill?: string };
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

type FlatRow = Omit<TrajectoryRow, 'children'>;

/**
 * Nests nodes listed in order by their depth: each node goes under the last node before it one
 * level up. Throws [`Unsupported`] when a node is more than one level deeper than the node
 * before it (or the first is not at the top), since it would have no parent to go under.
 */
export function nestByDepth(rows: readonly FlatRow[]): TrajectoryRow[] {
  type Building = FlatRow & { children: Building[] };
  const top: Building[] = [];
  const open: Building[] = [];
  const base = rows[0]?.depth ?? 0;
  for (const [index, row] of rows.entries()) {
    const level = row.depth - base;
    if (level < 0 || level > open.length) {
      throw new Unsupported(
        `output.nodes[${index}].depth is ${row.depth}, not at most one deeper than the node before it`,
      );
    }
    const node: Building = { ...row, children: [] };
    open.length = level;
    (open[level - 1]?.children ?? top).push(node);
    open.push(node);
  }
  return top;
}

function statusOf(value: string | undefined): CallState | undefined {
  if (value === undefined) return undefined;
  if (!(NODE_STATUSES as readonly string[]).includes(value)) {
    throw new Unsupported(`output.nodes[].status is not one of ${NODE_STATUSES.join(', ')}`);
  }
  return value as CallState;
}

/**
 * The `session_trajectory` card: the session on the row, and the call tree as an indented tree
 * — each descendant one level under its parent, nested code-mode calls included — with each
 * node's status, start time and duration, and where the whole text went when it was cut.
 */
export function sessionTrajectoryModel(input: CardInput): SessionTrajectoryModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'sessionTrajectory', state };
  try {
    const args = new Fields(input.arguments, 'arguments');
    const asked = args.text('session');
    const base = { kind: 'sessionTrajectory' as const, state, summary: asked };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const output = new Fields(input.result.output, 'output');
    const session = output.text('session');
    const title = output.optionalText('title');
    const turn = output.optionalCount('turn');
    const call = output.optionalText('call');
    const flat = output.list('nodes').map((raw): FlatRow => {
      const node = new Fields(raw, 'output.nodes[]');
      const nodeTurn = node.optionalCount('turn');
      const callId = node.optionalText('callId');
      const tool = node.optionalText('tool');
      const status = statusOf(node.optionalText('status'));
      const startedAt = node.optionalText('startedAt');
      const durationMs = node.optionalCount('durationMs');
      return {
        depth: node.count('depth'),
        kind: node.oneOf('kind', TRAJECTORY_KINDS),
        ...(nodeTurn === undefined ? {} : { turn: nodeTurn }),
        ...(callId === undefined ? {} : { callId }),
        ...(tool === undefined ? {} : { tool }),
        ...(status === undefined ? {} : { status }),
        summary: node.text('summary'),
        ...(startedAt === undefined ? {} : { startedAt }),
        ...(durationMs === undefined ? {} : { durationMs }),
        ...(callId === undefined ? {} : { href: sessionHref(session, { kind: 'call', callId }) }),
      };
    });
    const spill = output.optionalText('spill');
    return {
      ...base,
      summary: title === undefined || title === '' ? session : title,
      suffix: message('sessions.trajectory.nodes', { count: flat.length }),
      scope:
        call !== undefined
          ? message('sessions.trajectory.call', { call })
          : turn !== undefined
            ? message('sessions.trajectory.turn', { turn })
            : message('sessions.trajectory.session'),
      roots: nestByDepth(flat),
      ...(output.flag('truncated') ? { cut: spill === undefined ? {} : { spill } } : {}),
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}
