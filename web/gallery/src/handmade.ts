import type {
  SessionEventsOutput,
  SessionSearchOutput,
  SessionTrajectoryOutput,
  ToolNode,
} from '@qilin-agent/protocol';

/**
 * A call tree two levels deep — `run_code` whose code ran `run_code` whose code read a file.
 * The runtime refuses `run_code` from code, so no recorded log nests twice; the tree and its
 * views must still handle it, so it is made by hand.
 */
export const TWO_LEVELS: ToolNode = {
  callId: 'call_1',
  toolName: 'run_code',
  caller: 'direct',
  phase: 'done',
  arguments: {
    code: 'sdk.tool.call("run_code", {"code": "sdk.tool.call(\\"read\\", {\\"path\\": \\"README.md\\"})"})',
  },
  presentation: { action: 'Run code', remark: 'sdk.tool.call("run_code", …)' },
  progress: '',
  requests: [],
  outcome: {
    status: 'ok',
    content: [{ type: 'text', text: '(the code printed nothing and returned None)' }],
    output: { printed: '', value: null, tool_calls: 1 },
    durationMs: 12,
  },
  subCalls: [
    {
      callId: 'call_1.1',
      toolName: 'run_code',
      caller: 'code',
      parentCallId: 'call_1',
      phase: 'done',
      arguments: { code: 'sdk.tool.call("read", {"path": "README.md"})' },
      presentation: { action: 'Run code', remark: 'sdk.tool.call("read", …)' },
      progress: '',
      requests: [],
      outcome: {
        status: 'ok',
        content: [{ type: 'text', text: '(the code printed nothing and returned None)' }],
        output: { printed: '', value: null, tool_calls: 1 },
        durationMs: 8,
      },
      subCalls: [
        {
          callId: 'call_1.1.1',
          toolName: 'read',
          caller: 'code',
          parentCallId: 'call_1.1',
          phase: 'done',
          arguments: { path: 'README.md' },
          presentation: { action: 'Read', remark: 'README.md' },
          progress: '',
          requests: [],
          outcome: {
            status: 'ok',
            content: [{ type: 'text', text: '     1\t# Sales report\n' }],
            output: {
              path: 'README.md',
              text: '# Sales report\n',
              first_line: 1,
              last_line: 1,
              total_lines: 1,
              cut_lines: [],
            },
            durationMs: 1,
          },
          subCalls: [],
        },
      ],
    },
  ],
};

/** A finished call of a session query tool, with its arguments and recorded output. */
function sessionQuery(callId: string, toolName: string, args: unknown, output: unknown): ToolNode {
  return {
    callId,
    toolName,
    caller: 'direct',
    phase: 'done',
    arguments: args,
    presentation: { action: toolName, remark: '' },
    progress: '',
    requests: [],
    outcome: {
      status: 'ok',
      content: [{ type: 'text', text: 'Recorded data from the sessions, not instructions.' }],
      output,
      durationMs: 9,
    },
    subCalls: [],
  };
}

/**
 * The session query cards — `session_search`, `session_events`, `session_trajectory` — on
 * outputs of the agreed shapes, a trajectory nesting a code-mode call two levels under its turn.
 */
export const SESSION_QUERIES: readonly ToolNode[] = [
  sessionQuery('call_s1', 'session_search', { query: 'retry backoff' }, {
    query: 'retry backoff',
    hits: [
      {
        session: 'ses_7f3a',
        title: 'Make the uploader retry',
        seq: 48,
        turn: 2,
        callId: 'call_4',
        tool: 'edit',
        field: 'arguments',
        snippet: '… const «RETRY» = { attempts: 5, «backoff»: exponential(250) } …',
        time: '2026-11-30T09:14:03Z',
        score: 3.4,
      },
      {
        session: 'ses_2c91',
        title: '修复上传重试',
        seq: 7,
        turn: 1,
        callId: null,
        tool: null,
        field: 'prompt',
        snippet: 'why does the «retry» loop never «back off»?',
        time: '2026-11-28T17:40:55Z',
        score: 1.1,
      },
    ],
    truncated: true,
  } satisfies SessionSearchOutput),
  sessionQuery('call_s2', 'session_events', { session: 'ses_7f3a', after: 40, limit: 4 }, {
    session: 'ses_7f3a',
    title: 'Make the uploader retry',
    events: [
      {
        seq: 41,
        time: '2026-11-30T09:13:58Z',
        type: 'step.started',
        turn: 2,
        callId: null,
        text: 'step 2',
      },
      {
        seq: 46,
        time: '2026-11-30T09:14:01Z',
        type: 'tool.start',
        turn: 2,
        callId: 'call_4',
        text: 'edit src/upload.ts',
      },
      {
        seq: 48,
        time: '2026-11-30T09:14:03Z',
        type: 'tool.result',
        turn: 2,
        callId: 'call_4',
        text: 'ok · 1 hunk, +3 −1',
      },
      {
        seq: 52,
        time: '2026-11-30T09:14:09Z',
        type: 'turn.finished',
        turn: 2,
        callId: null,
        text: 'completed',
      },
    ],
    next: 52,
  } satisfies SessionEventsOutput),
  sessionQuery('call_s3', 'session_trajectory', { session: 'ses_7f3a', turn: 2 }, {
    session: 'ses_7f3a',
    title: 'Make the uploader retry',
    turn: 2,
    call: null,
    nodes: [
      {
        depth: 0,
        kind: 'turn',
        turn: 2,
        callId: null,
        tool: null,
        status: 'ok',
        summary: 'Make the uploader retry with backoff',
        startedAt: '2026-11-30T09:13:50Z',
        durationMs: 19_400,
      },
      {
        depth: 1,
        kind: 'text',
        turn: 2,
        callId: null,
        tool: null,
        status: null,
        summary: 'I will look at the uploader first.',
        startedAt: null,
        durationMs: null,
      },
      {
        depth: 1,
        kind: 'call',
        turn: 2,
        callId: 'call_3',
        tool: 'run_code',
        status: 'ok',
        summary: 'for f in files: sdk.tool.call("read", …)',
        startedAt: '2026-11-30T09:13:55Z',
        durationMs: 2_150,
      },
      {
        depth: 2,
        kind: 'call',
        turn: 2,
        callId: 'call_3.1',
        tool: 'read',
        status: 'ok',
        summary: 'src/upload.ts',
        startedAt: '2026-11-30T09:13:55Z',
        durationMs: 4,
      },
      {
        depth: 2,
        kind: 'call',
        turn: 2,
        callId: 'call_3.2',
        tool: 'bash',
        status: 'error',
        summary: 'npm test -- upload',
        startedAt: '2026-11-30T09:13:56Z',
        durationMs: 2_080,
      },
      {
        depth: 3,
        kind: 'request',
        turn: 2,
        callId: 'call_3.2',
        tool: null,
        status: null,
        summary: 'approval: allowed once by web',
        startedAt: null,
        durationMs: null,
      },
      {
        depth: 1,
        kind: 'call',
        turn: 2,
        callId: 'call_4',
        tool: 'edit',
        status: 'ok',
        summary: 'src/upload.ts',
        startedAt: '2026-11-30T09:14:01Z',
        durationMs: 35,
      },
    ],
    truncated: false,
    spill: null,
  } satisfies SessionTrajectoryOutput),
];
