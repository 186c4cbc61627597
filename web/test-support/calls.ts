// Test helpers: calls of the recorded logs as the card models read them.
import { foldEvents, type ToolNode } from '@qilin-agent/protocol';
import type { CardInput } from '@qilin-agent/client-ui-tool';
import { fixtureEvents } from './fixtures';

/** The fixtures' working folder and home, as the generator wrote them. */
export const CWD = '/home/qilin/workspace';
export const HOME = '/home/qilin';

/** A call of a log, folded to its end. */
export function callOf(fixture: string, callId: string): ToolNode {
  const node = foldEvents(fixtureEvents(fixture)).call(callId);
  if (node === undefined) throw new Error(`${fixture} has no call ${callId}`);
  return node;
}

/** Every call of a log, roots and nested, in order. */
export function callsOf(fixture: string): ToolNode[] {
  const out: ToolNode[] = [];
  const visit = (node: ToolNode) => {
    out.push(node);
    node.subCalls.forEach(visit);
  };
  for (const turn of foldEvents(fixtureEvents(fixture)).tree().turns) {
    for (const item of turn.items) if (item.type === 'tool') visit(item.node);
  }
  return out;
}

/** The first call of a log with this tool (and status, when given). */
export function findCall(fixture: string, toolName: string, status?: string): ToolNode {
  const node = callsOf(fixture).find(
    (call) =>
      call.toolName === toolName && (status === undefined || call.outcome?.status === status),
  );
  if (node === undefined) throw new Error(`${fixture} has no ${toolName} call ${status ?? ''}`);
  return node;
}

/** What a model reads of a node at a phase: `preparing`, `start` (dispatched) or `result`. */
export function inputAt(
  node: ToolNode,
  phase: 'preparing' | 'start' | 'result' = 'result',
): CardInput {
  const base = { toolName: node.toolName, cwd: CWD, home: HOME };
  if (phase === 'preparing') return { ...base, phase };
  const start = {
    ...base,
    arguments: node.arguments,
    progress: node.progress,
    ...(node.parentCallId === undefined ? {} : { parentCallId: node.parentCallId }),
    ...(node.review === undefined ? {} : { review: node.review }),
  };
  if (phase === 'start') return { ...start, phase };
  if (node.outcome === undefined) throw new Error(`${node.callId} has no result`);
  return { ...start, phase, result: node.outcome };
}

/**
 * A hand-made call of `toolName` with id `callId`: running when `ended` is absent, else ended
 * `ok` with `output` (or failed with `INVALID_ARGUMENTS` and `text`).
 */
export function madeCall(
  callId: string,
  toolName: string,
  args: unknown,
  ended?: { output?: unknown; status?: 'ok' | 'error'; text?: string },
): ToolNode {
  return {
    callId,
    toolName,
    caller: 'direct',
    phase: ended === undefined ? 'running' : 'done',
    arguments: args,
    progress: '',
    requests: [],
    ...(ended === undefined
      ? {}
      : {
          outcome: {
            status: ended.status ?? 'ok',
            ...(ended.status === 'error' ? { errorCode: 'INVALID_ARGUMENTS' as const } : {}),
            content: [{ type: 'text', text: ended.text ?? 'the recorded result' }],
            ...(ended.output === undefined ? {} : { output: ended.output }),
            durationMs: 12,
          },
        }),
    subCalls: [],
  };
}
