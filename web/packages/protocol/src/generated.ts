// Generated from the qilin-protocol crate; do not edit by hand.
// Regenerate: QILIN_UPDATE_BINDINGS=1 cargo test -p qilin-protocol typescript

export type Event = { 
/**
 * Position in the session's log, starting at 1.
 */
seq: number, 
/**
 * When it happened: RFC 3339 in UTC with milliseconds (`2026-11-30T17:05:16.123Z`).
 */
time: string, } & ({ "type": "session.started" } & SessionStartedEvent | { "type": "turn.started", 
/**
 * The turn's id.
 */
turnId: string, 
/**
 * The user's prompt.
 */
prompt: string, 
/**
 * The id the client chose for this turn, so that a retried request starts no second turn.
 */
clientTurnId?: string, } | { "type": "turn.finished", 
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
text: string, } | { "type": "step.reasoning.delta", 
/**
 * The turn's id.
 */
turnId: string, 
/**
 * Step number within the turn.
 */
step: number, 
/**
 * The new reasoning text.
 */
text: string, } | { "type": "step.reasoning.end", 
/**
 * The turn's id.
 */
turnId: string, 
/**
 * Step number within the turn.
 */
step: number, 
/**
 * The provider's signature over the block's text, when it gave one.
 */
signature?: string, 
/**
 * The opaque data of a block the provider redacted (its text is empty).
 */
redacted?: string, } | { "type": "step.finished", 
/**
 * The turn's id.
 */
turnId: string, 
/**
 * Step number within the turn.
 */
step: number, 
/**
 * Tokens used by the step (what the provider reported before a failure too).
 */
usage: Usage, 
/**
 * Why the model stopped; absent when the step ended without the model finishing
 * (an interrupt, a failed stream).
 */
stopReason?: StopReason, } | { "type": "tool.preparing" } & ToolPreparingEvent | { "type": "tool.start" } & ToolStartEvent | { "type": "tool.progress" } & ToolProgressEvent | { "type": "tool.result" } & ToolResultEvent | { "type": "request.opened" } & RequestOpenedEvent | { "type": "request.resolved" } & RequestResolvedEvent | { "type": "context.compacted" } & ContextCompactedEvent);

export type EventBody = { "type": "session.started" } & SessionStartedEvent | { "type": "turn.started", 
/**
 * The turn's id.
 */
turnId: string, 
/**
 * The user's prompt.
 */
prompt: string, 
/**
 * The id the client chose for this turn, so that a retried request starts no second turn.
 */
clientTurnId?: string, } | { "type": "turn.finished", 
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
text: string, } | { "type": "step.reasoning.delta", 
/**
 * The turn's id.
 */
turnId: string, 
/**
 * Step number within the turn.
 */
step: number, 
/**
 * The new reasoning text.
 */
text: string, } | { "type": "step.reasoning.end", 
/**
 * The turn's id.
 */
turnId: string, 
/**
 * Step number within the turn.
 */
step: number, 
/**
 * The provider's signature over the block's text, when it gave one.
 */
signature?: string, 
/**
 * The opaque data of a block the provider redacted (its text is empty).
 */
redacted?: string, } | { "type": "step.finished", 
/**
 * The turn's id.
 */
turnId: string, 
/**
 * Step number within the turn.
 */
step: number, 
/**
 * Tokens used by the step (what the provider reported before a failure too).
 */
usage: Usage, 
/**
 * Why the model stopped; absent when the step ended without the model finishing
 * (an interrupt, a failed stream).
 */
stopReason?: StopReason, } | { "type": "tool.preparing" } & ToolPreparingEvent | { "type": "tool.start" } & ToolStartEvent | { "type": "tool.progress" } & ToolProgressEvent | { "type": "tool.result" } & ToolResultEvent | { "type": "request.opened" } & RequestOpenedEvent | { "type": "request.resolved" } & RequestResolvedEvent | { "type": "context.compacted" } & ContextCompactedEvent;

export type SessionStartedEvent = { 
/**
 * The session's id.
 */
sessionId: string, 
/**
 * The [`PROTOCOL_VERSION`] the log is written in.
 */
protocolVersion: number, 
/**
 * The agent the session runs.
 */
agent: AgentInfo, 
/**
 * The model, as `provider:name` (`openai:gpt-4.1`, `scripted:demo.script.yaml`).
 */
model: string, 
/**
 * The workspace folder, absolute.
 */
workspace: string, 
/**
 * The environment and project memory the system prompt carries, as they were when the
 * session began (a resumed session reuses them, so its prompt stays byte-identical).
 */
context?: SessionContext, };

export type AgentInfo = { 
/**
 * The agent's name.
 */
name: string, 
/**
 * The agent file, when the agent came from one.
 */
file?: string, 
/**
 * A hash of the agent file's contents (hex), to tell whether it changed since.
 */
fileHash?: string, 
/**
 * The agent is one built into Qilin (`coder`), loaded again by its name on resume.
 */
builtin?: boolean, };

export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "refusal" | "content_filter" | "other";

export type FinishReason = "completed" | "max_steps" | "interrupted" | "max_tokens" | "refused" | "error";

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
 * Bytes of output the call printed after the previous progress event's text and before
 * this one's that are not shown live (the live view is bounded; the result holds them).
 * Absent when `text` follows on from the previous progress event.
 */
omittedBytes?: number, 
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

export type RequestOpenedEvent = { 
/**
 * The request's id, unique in the session; answers name it.
 */
requestId: string, 
/**
 * The waiting call.
 */
callId: string, 
/**
 * The `run_code` call that made the waiting call, for a code-mode call.
 */
parentCallId?: string, 
/**
 * The waiting call's tool.
 */
toolName: string, 
/**
 * What is asked.
 */
ask: RequestAsk, };

export type RequestAsk = { "kind": "approval", 
/**
 * Why the policy asks.
 */
reason: string, 
/**
 * The call's friendly action and remark.
 */
presentation: CallPresentation, 
/**
 * The call's arguments.
 */
arguments: unknown, 
/**
 * The detail the call shows before it runs (a diff, a command).
 */
detail?: Detail, } | { "kind": "question", 
/**
 * The questions, in the order asked.
 */
questions: Array<Question>, };

export type RequestResolvedEvent = { 
/**
 * The request's id.
 */
requestId: string, 
/**
 * The call that waited.
 */
callId: string, 
/**
 * The `run_code` call that made the waiting call, for a code-mode call.
 */
parentCallId?: string, 
/**
 * The answer, or why there is none.
 */
resolution: RequestResolution, 
/**
 * Who resolved it: `runtime` for a cancellation, else what the answering host named
 * itself (`terminal`, a web client's id).
 */
resolvedBy: string, };

export type RequestResolution = { "outcome": "approved" } | { "outcome": "approved_for_session", 
/**
 * What is allowed from now on.
 */
grant: SessionGrant, } | { "outcome": "denied", 
/**
 * What the person said, told to the model.
 */
reason?: string, } | { "outcome": "answered", 
/**
 * One answer per question, paired by id.
 */
answers: Array<Answer>, } | { "outcome": "dismissed" } | { "outcome": "cancelled" };

export type ContextCompactedEvent = { 
/**
 * The summary: what the user wants, the decisions taken, the files touched, what
 * remains to do.
 */
summary: string, 
/**
 * The `seq` of the last event the summary replaces; the model is sent nothing of the
 * events up to it but the summary.
 */
replacesThroughSeq: number, 
/**
 * Tokens used by the request that wrote the summary.
 */
usage: Usage, 
/**
 * The size of a request before the compaction (system prompt, tools and messages),
 * estimated at four bytes a token.
 */
estimatedTokensBefore: number, 
/**
 * The size of a request after it, estimated the same way.
 */
estimatedTokensAfter: number, };

export type Question = { 
/**
 * A short id, unique within the call, that the answer is paired with.
 */
id: string, 
/**
 * The question as the user reads it; complete on its own.
 */
question: string, 
/**
 * Choices to offer; absent for a free-text answer.
 */
options?: Array<string>, 
/**
 * With `options`: let the user pick several (default false: exactly one).
 */
multi_select?: boolean, };

export type Answer = { 
/**
 * The id of the question answered.
 */
id: string, 
/**
 * The answer: the text typed, or the option(s) picked (several only with
 * `multi_select`).
 */
answer: Array<string>, };

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

export type SessionContext = { 
/**
 * Where the session runs.
 */
environment: Environment, 
/**
 * The project's memory files, from the repository root down to the workspace.
 */
memory?: Array<MemoryFile>, };

export type Environment = { 
/**
 * The workspace folder, absolute.
 */
workspace: string, 
/**
 * The operating system (`linux`, `macos`, `windows`).
 */
os: string, 
/**
 * The user's shell (`$SHELL`), when known.
 */
shell?: string, 
/**
 * The date the session began, `YYYY-MM-DD` in local time.
 */
date: string, 
/**
 * The git branch checked out (or `detached at SHA`), when the workspace is in a repository.
 */
gitBranch?: string, };

export type MemoryFile = { 
/**
 * Its path relative to the repository root (or the workspace outside a repository).
 */
path: string, 
/**
 * Its text, cut when the project's memory files are too long together.
 */
text: string, };

export type SessionGrant = { 
/**
 * The tool's wire name.
 */
tool: string, 
/**
 * Only commands (the call's `command` argument) that are this prefix, or start with it
 * followed by a space, and that chain no other command.
 */
commandPrefix?: string, };

/** The most bytes of a call's output shown live from its start. */
export const LIVE_HEAD_BYTES = 262144;

/** The most bytes of a call's latest output shown live after its start. */
export const LIVE_TAIL_BYTES = 262144;
