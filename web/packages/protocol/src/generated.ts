// Generated from the qilin-protocol crate; do not edit by hand.
// Regenerate: QILIN_UPDATE_BINDINGS=1 cargo test -p qilin-protocol typescript

export type Event = { 
/**
 * Position in the session's log, starting at 1.
 */
seq: number, } & ({ "type": "turn.started", 
/**
 * The turn's id.
 */
turnId: string, 
/**
 * The user's prompt.
 */
prompt: string, } | { "type": "turn.finished", 
/**
 * The turn's id.
 */
turnId: string, 
/**
 * Why it ended.
 */
reason: FinishReason, 
/**
 * A message for the user when the turn ended in error.
 */
message?: string, } | { "type": "step.started", 
/**
 * The turn's id.
 */
turnId: string, 
/**
 * Step number within the turn, from 1.
 */
step: number, } | { "type": "step.text.delta", 
/**
 * The turn's id.
 */
turnId: string, 
/**
 * Step number within the turn.
 */
step: number, 
/**
 * The new text.
 */
text: string, } | { "type": "step.finished", 
/**
 * The turn's id.
 */
turnId: string, 
/**
 * Step number within the turn.
 */
step: number, 
/**
 * Tokens used by the step.
 */
usage: Usage, } | { "type": "tool.preparing" } & ToolPreparingEvent | { "type": "tool.start" } & ToolStartEvent | { "type": "tool.progress" } & ToolProgressEvent | { "type": "tool.result" } & ToolResultEvent);

export type EventBody = { "type": "turn.started", 
/**
 * The turn's id.
 */
turnId: string, 
/**
 * The user's prompt.
 */
prompt: string, } | { "type": "turn.finished", 
/**
 * The turn's id.
 */
turnId: string, 
/**
 * Why it ended.
 */
reason: FinishReason, 
/**
 * A message for the user when the turn ended in error.
 */
message?: string, } | { "type": "step.started", 
/**
 * The turn's id.
 */
turnId: string, 
/**
 * Step number within the turn, from 1.
 */
step: number, } | { "type": "step.text.delta", 
/**
 * The turn's id.
 */
turnId: string, 
/**
 * Step number within the turn.
 */
step: number, 
/**
 * The new text.
 */
text: string, } | { "type": "step.finished", 
/**
 * The turn's id.
 */
turnId: string, 
/**
 * Step number within the turn.
 */
step: number, 
/**
 * Tokens used by the step.
 */
usage: Usage, } | { "type": "tool.preparing" } & ToolPreparingEvent | { "type": "tool.start" } & ToolStartEvent | { "type": "tool.progress" } & ToolProgressEvent | { "type": "tool.result" } & ToolResultEvent;

export type FinishReason = "completed" | "max_steps" | "interrupted" | "error";

export type Usage = { 
/**
 * Prompt tokens sent.
 */
inputTokens: number, 
/**
 * Tokens generated.
 */
outputTokens: number, 
/**
 * Prompt tokens served from the provider's cache.
 */
cacheReadTokens: number, };

export type CallerKind = "direct" | "code";

export type CallStatus = "ok" | "error" | "denied" | "interrupted";

export type ToolPreparingEvent = { 
/**
 * The call's id, the same through all phases.
 */
callId: string, 
/**
 * The tool's wire name.
 */
toolName: string, 
/**
 * Argument text appended since the previous `tool.preparing` of this call.
 */
argumentsDelta: string, };

export type ToolStartEvent = { 
/**
 * The call's id.
 */
callId: string, 
/**
 * The tool's wire name.
 */
toolName: string, 
/**
 * Which entry the call came through.
 */
caller: CallerKind, 
/**
 * The `run_code` call that made this call, for a code-mode call.
 */
parentCallId?: string, 
/**
 * The final arguments.
 */
arguments: unknown, 
/**
 * Friendly action and remark for the card's header.
 */
presentation: CallPresentation, 
/**
 * The detail shown while the call runs.
 */
beforeDetail?: Detail, };

export type ToolProgressEvent = { 
/**
 * The call's id.
 */
callId: string, 
/**
 * The `run_code` call that made this call, for a code-mode call.
 */
parentCallId?: string, 
/**
 * New output since the previous progress event.
 */
text: string, };

export type ToolResultEvent = { 
/**
 * The call's id.
 */
callId: string, 
/**
 * The tool's wire name.
 */
toolName: string, 
/**
 * Which entry the call came through.
 */
caller: CallerKind, 
/**
 * The `run_code` call that made this call, for a code-mode call.
 */
parentCallId?: string, 
/**
 * How the call ended.
 */
status: CallStatus, 
/**
 * Why it failed, when it did.
 */
errorCode?: ErrorCode, 
/**
 * What the model sees: the output, or the error message.
 */
content: Array<ContentBlock>, 
/**
 * The tool's structured output, when it ran to completion.
 */
output?: unknown, 
/**
 * The detail shown after the call.
 */
detail?: Detail, 
/**
 * Wall time from dispatch to result, in milliseconds.
 */
durationMs: number, };

export type ContentBlock = { "type": "text", 
/**
 * The text itself.
 */
text: string, } | { "type": "image", 
/**
 * The media type, e.g. `image/png`.
 */
mediaType: string, 
/**
 * The image bytes, base64 (standard alphabet, padded).
 */
data: string, } | { "type": "json", 
/**
 * The value.
 */
value: unknown, };

export type ErrorCode = "UNKNOWN_TOOL" | "INVALID_ARGUMENTS" | "CODE_MODE_ONLY" | "AUTO_REVIEW_DENIED" | "TIMEOUT" | "INTERRUPTED" | "TOOL_FAILED";

export type CallPresentation = { 
/**
 * What the call does, as a short verb phrase ("Read", "Search files").
 */
action: string, 
/**
 * The object of the action (a path, a pattern, a command's first line).
 */
remark: string, };

export type Detail = { "type": "text", 
/**
 * The text.
 */
text: string, } | { "type": "markdown", 
/**
 * The Markdown source.
 */
markdown: string, } | { "type": "code", 
/**
 * Language name for the highlighter (`python`, `bash`, `rust`, ...).
 */
language: string, 
/**
 * The code.
 */
code: string, } | { "type": "diff", 
/**
 * The file's path relative to the workspace.
 */
path: string, 
/**
 * The unified diff text.
 */
diff: string, 
/**
 * Lines added.
 */
added: number, 
/**
 * Lines removed.
 */
removed: number, } | { "type": "shell", 
/**
 * The command line.
 */
command: string, 
/**
 * Combined output (possibly cut to head and tail).
 */
output: string, 
/**
 * Exit code, when the process exited.
 */
exitCode: number | null, } | { "type": "json", 
/**
 * The value.
 */
value: unknown, };
