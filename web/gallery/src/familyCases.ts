import type { ErrorCode, ToolNode } from '@qilin-agent/protocol';

/** One hand-made case of a tool family's cards: its id in the gallery, and the call. */
export interface FamilyCase {
  /** `<tool>-<state>`, shown as `handmade/<family>/<id>`. */
  readonly id: string;
  /** The call. */
  readonly node: ToolNode;
}

/** How a family's ended calls are recorded: a failure's code, the text, the duration. */
export interface RecordedEnd {
  readonly errorCode: ErrorCode;
  readonly text: string;
  readonly durationMs: number;
}

/**
 * A maker of one family's calls: `node(callId, toolName, phase, args?, ended?)` is a call
 * preparing, running, or ended with `ended.status` and `ended.output`, recorded as `recorded`
 * says.
 */
export function callMaker(recorded: RecordedEnd) {
  return (
    callId: string,
    toolName: string,
    phase: 'preparing' | 'running' | 'done',
    args?: unknown,
    ended?: { status: 'ok' | 'error'; output?: unknown; text?: string },
  ): ToolNode => ({
    callId,
    toolName,
    caller: 'direct',
    phase,
    ...(args === undefined ? {} : { arguments: args }),
    progress: '',
    requests: [],
    ...(ended === undefined
      ? {}
      : {
          outcome: {
            status: ended.status,
            ...(ended.status === 'error' ? { errorCode: recorded.errorCode } : {}),
            content: [{ type: 'text' as const, text: ended.text ?? recorded.text }],
            ...(ended.output === undefined ? {} : { output: ended.output }),
            durationMs: recorded.durationMs,
          },
        }),
    subCalls: [],
  });
}
