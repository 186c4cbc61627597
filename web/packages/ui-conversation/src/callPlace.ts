import type { ConversationTree, ToolNode, TurnNode } from '@qilin-agent/protocol';

/** Where one call sits in the conversation, and the call itself. */
export interface CallPlace {
  /** The call. */
  readonly node: ToolNode;
  /** Its turn. */
  readonly turn: TurnNode;
  /** The turn's position in the session, from 1. */
  readonly turnNumber: number;
  /**
   * The call's position among its siblings, from 1: the root calls of its step (of its turn when
   * steps are unknown), or the calls its parent made.
   */
  readonly index: number;
  /** How many siblings it has, itself included. */
  readonly count: number;
  /** The calls above it, the root call first; empty for a root call. */
  readonly ancestors: readonly ToolNode[];
}

/**
 * Finds a call anywhere in the tree, with its place; `undefined` when the tree has no such call.
 * A root call is counted among the root calls of its step.
 */
export function findCall(tree: ConversationTree, callId: string): CallPlace | undefined {
  for (const [turnIndex, turn] of tree.turns.entries()) {
    const roots = turn.items.flatMap((item) => (item.type === 'tool' ? [item.node] : []));
    const found = search(roots, callId, []);
    if (found === undefined) continue;
    const place = { ...found, turn, turnNumber: tree.firstTurn + turnIndex + 1 };
    const step = found.node.step;
    if (found.ancestors.length > 0 || step === undefined) return place;
    const sameStep = roots.filter((root) => root.step === step);
    return { ...place, index: sameStep.indexOf(found.node) + 1, count: sameStep.length };
  }
  return undefined;
}

function search(
  siblings: readonly ToolNode[],
  callId: string,
  ancestors: readonly ToolNode[],
): Omit<CallPlace, 'turn' | 'turnNumber'> | undefined {
  for (const [index, node] of siblings.entries()) {
    if (node.callId === callId) {
      return { node, index: index + 1, count: siblings.length, ancestors };
    }
    if (node.subCalls.length > 0) {
      const found = search(node.subCalls, callId, [...ancestors, node]);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** The most characters of one raw value the trajectory shows; the rest is counted. */
export const MAX_RAW_CHARS = 20_000;

/** A raw value as indented JSON (a string as it is), cut to `max` characters. */
export function rawText(
  value: unknown,
  max = MAX_RAW_CHARS,
): { readonly text: string; readonly cut: number } {
  let text: string;
  if (typeof value === 'string') text = value;
  else {
    try {
      text = JSON.stringify(value, null, 2) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  if (text.length <= max) return { text, cut: 0 };
  return { text: text.slice(0, max), cut: text.length - max };
}

/** Milliseconds between two RFC 3339 times, or `undefined` when either is missing or invalid. */
export function between(from: string | undefined, to: string | undefined): number | undefined {
  if (from === undefined || to === undefined) return undefined;
  const span = Date.parse(to) - Date.parse(from);
  return Number.isFinite(span) ? span : undefined;
}
