import type { ToolNode } from '@qilin-agent/protocol';

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
