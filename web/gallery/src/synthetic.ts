import type { Event } from '@qilin-agent/protocol';

type Body = Event extends infer E ? (E extends Event ? Omit<E, 'seq' | 'time'> : never) : never;

/** When the synthetic session starts; each event comes 40 ms after the one before. */
const START_MS = Date.UTC(2026, 10, 30, 17, 0, 0);

const NESTED = ['grep', 'read', 'bash', 'edit'] as const;

function nestedCall(parent: string, index: number): Body[] {
  const callId = `${parent}.${index + 1}`;
  const base = { callId, caller: 'code' as const, parentCallId: parent };
  const tool = NESTED[index % NESTED.length] as (typeof NESTED)[number];
  const path = `src/module_${parent.replace(/\D/g, '')}_${index}.rs`;
  switch (tool) {
    case 'grep':
      return [
        {
          type: 'tool.start',
          ...base,
          toolName: tool,
          arguments: { pattern: 'TODO', path: 'src' },
          presentation: { action: 'Search', remark: 'TODO' },
        },
        {
          type: 'tool.result',
          ...base,
          toolName: tool,
          status: 'ok',
          durationMs: 3,
          content: [{ type: 'text', text: `${path}\n` }],
          output: {
            mode: 'files_with_matches',
            files: [{ path, match_count: null, lines: [] }],
            total_files: 1,
            total_matches: 0,
            truncated: false,
          },
        },
      ];
    case 'read': {
      const text =
        Array.from({ length: 30 }, (_, i) => `fn line_${i}() -> u32 { ${i} }`).join('\n') + '\n';
      return [
        {
          type: 'tool.start',
          ...base,
          toolName: tool,
          arguments: { path },
          presentation: { action: 'Read', remark: path },
        },
        {
          type: 'tool.result',
          ...base,
          toolName: tool,
          status: 'ok',
          durationMs: 1,
          content: [{ type: 'text', text }],
          output: { path, text, first_line: 1, last_line: 30, total_lines: 30, cut_lines: [] },
        },
      ];
    }
    case 'bash':
      return [
        {
          type: 'tool.start',
          ...base,
          toolName: tool,
          arguments: { command: 'cargo test -q' },
          presentation: { action: 'Run command', remark: 'cargo test -q' },
        },
        {
          type: 'tool.result',
          ...base,
          toolName: tool,
          status: 'ok',
          durationMs: 900,
          content: [{ type: 'text', text: 'test result: ok. 12 passed\n[exit code 0, 0.9 s]' }],
          output: {
            kind: 'finished',
            output: 'test result: ok. 12 passed\n',
            exit_code: index % 8 === 2 ? 1 : 0,
            signal: null,
            timed_out: false,
            duration_ms: 900,
            total_bytes: 27,
            spill_path: null,
          },
        },
      ];
    case 'edit':
      return [
        {
          type: 'tool.start',
          ...base,
          toolName: tool,
          arguments: { path, old_string: 'a + b', new_string: 'a.saturating_add(b)' },
          presentation: { action: 'Edit', remark: path },
        },
        {
          type: 'tool.result',
          ...base,
          toolName: tool,
          status: 'ok',
          durationMs: 2,
          content: [{ type: 'text', text: 'Edited' }],
          output: {
            path,
            replacements: 1,
            lines: [4],
            added: 1,
            removed: 1,
            diff: `--- a/${path}\n+++ b/${path}\n@@ -3,3 +3,3 @@\n fn add(a: u32, b: u32) -> u32 {\n-    a + b\n+    a.saturating_add(b)\n }\n`,
          },
        },
      ];
  }
}

/**
 * A transcript of `calls` calls in one turn: root `run_code` calls with four nested calls
 * each (search, read, shell, edit), then one `write` call whose arguments are still streaming.
 */
export function syntheticTranscript(calls: number): {
  events: Event[];
  streamingCallId: string;
  nestedCallId: string;
} {
  const bodies: Body[] = [
    { type: 'turn.started', turnId: 'turn-1', prompt: 'Refactor every module.' },
  ];
  const roots = Math.ceil(calls / 5);
  for (let r = 1; r <= roots; r += 1) {
    const callId = `call_${r}`;
    const code = `for path in modules:\n    sdk.tool.call("edit", {"path": path})\n`;
    bodies.push({
      type: 'tool.start',
      callId,
      toolName: 'run_code',
      caller: 'direct',
      arguments: { code },
      presentation: { action: 'Run code', remark: 'for path in modules:' },
    });
    for (let n = 0; n < 4; n += 1) bodies.push(...nestedCall(callId, n));
    bodies.push({
      type: 'tool.result',
      callId,
      toolName: 'run_code',
      caller: 'direct',
      status: 'ok',
      durationMs: 950,
      content: [{ type: 'text', text: 'done\n' }],
      output: { printed: 'done\n', value: null, tool_calls: 4 },
    });
  }
  const streamingCallId = `call_${roots + 1}`;
  bodies.push({
    type: 'tool.preparing',
    callId: streamingCallId,
    toolName: 'write',
    argumentsDelta: '{"path":"notes/big.md","content":"',
  });
  // A root whose nested call stays running, for live output.
  const nestedParent = `call_${roots + 2}`;
  const nestedCallId = `${nestedParent}.1`;
  bodies.push({
    type: 'tool.start',
    callId: nestedParent,
    toolName: 'run_code',
    caller: 'direct',
    arguments: { code: 'sdk.tool.call("bash", {"command": "cargo build"})' },
    presentation: { action: 'Run code', remark: '' },
  });
  bodies.push({
    type: 'tool.start',
    callId: nestedCallId,
    toolName: 'bash',
    caller: 'code',
    parentCallId: nestedParent,
    arguments: { command: 'cargo build' },
    presentation: { action: 'Run command', remark: 'cargo build' },
  });
  return {
    events: bodies.map(
      (body, index) =>
        ({ ...body, seq: index + 1, time: new Date(START_MS + index * 40).toISOString() }) as Event,
    ),
    streamingCallId,
    nestedCallId,
  };
}
