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
stopReason?: StopReason, } | { "type": "tool.preparing" } & ToolPreparingEvent | { "type": "tool.start" } & ToolStartEvent | { "type": "tool.progress" } & ToolProgressEvent | { "type": "tool.result" } & ToolResultEvent | { "type": "request.opened" } & RequestOpenedEvent | { "type": "request.resolved" } & RequestResolvedEvent | { "type": "context.compacted" } & ContextCompactedEvent | { "type": "agent.started" } & AgentStartedEvent | { "type": "agent.finished" } & AgentFinishedEvent | { "type": "agent.delivered" } & AgentDeliveredEvent | { "type": "agent.message" } & AgentMessageEvent | { "type": "task.created" } & TaskCreatedEvent | { "type": "task.updated" } & TaskUpdatedEvent | { "type": "goal.created" } & GoalCreatedEvent | { "type": "goal.updated" } & GoalUpdatedEvent | { "type": "loop.started" } & LoopStartedEvent | { "type": "loop.iteration" } & LoopIterationEvent | { "type": "loop.finished" } & LoopFinishedEvent | { "type": "schedule.created" } & ScheduleCreatedEvent | { "type": "schedule.deleted" } & ScheduleDeletedEvent | { "type": "schedule.fired" } & ScheduleFiredEvent | { "type": "schedule.finished" } & ScheduleFinishedEvent | { "type": "tool.reviewed" } & ToolReviewedEvent | { "type": "review.granted" } & ReviewGrantedEvent | { "type": "review.circuit_open" } & ReviewCircuitOpenEvent | { "type": "workflow.started" } & WorkflowStartedEvent | { "type": "workflow.step" } & WorkflowStepEvent | { "type": "workflow.finished" } & WorkflowFinishedEvent);

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
stopReason?: StopReason, } | { "type": "tool.preparing" } & ToolPreparingEvent | { "type": "tool.start" } & ToolStartEvent | { "type": "tool.progress" } & ToolProgressEvent | { "type": "tool.result" } & ToolResultEvent | { "type": "request.opened" } & RequestOpenedEvent | { "type": "request.resolved" } & RequestResolvedEvent | { "type": "context.compacted" } & ContextCompactedEvent | { "type": "agent.started" } & AgentStartedEvent | { "type": "agent.finished" } & AgentFinishedEvent | { "type": "agent.delivered" } & AgentDeliveredEvent | { "type": "agent.message" } & AgentMessageEvent | { "type": "task.created" } & TaskCreatedEvent | { "type": "task.updated" } & TaskUpdatedEvent | { "type": "goal.created" } & GoalCreatedEvent | { "type": "goal.updated" } & GoalUpdatedEvent | { "type": "loop.started" } & LoopStartedEvent | { "type": "loop.iteration" } & LoopIterationEvent | { "type": "loop.finished" } & LoopFinishedEvent | { "type": "schedule.created" } & ScheduleCreatedEvent | { "type": "schedule.deleted" } & ScheduleDeletedEvent | { "type": "schedule.fired" } & ScheduleFiredEvent | { "type": "schedule.finished" } & ScheduleFinishedEvent | { "type": "tool.reviewed" } & ToolReviewedEvent | { "type": "review.granted" } & ReviewGrantedEvent | { "type": "review.circuit_open" } & ReviewCircuitOpenEvent | { "type": "workflow.started" } & WorkflowStartedEvent | { "type": "workflow.step" } & WorkflowStepEvent | { "type": "workflow.finished" } & WorkflowFinishedEvent;

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
context?: ProjectContext, 
/**
 * For a child session (a subagent): the session that started it.
 */
parentSessionId?: string, 
/**
 * For a child session: the parent's `agent` call that started it (for a code-mode call,
 * that nested call's own id, not its `run_code` call's).
 */
parentCallId?: string, };

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
cacheReadTokens: number, 
/**
 * Prompt tokens written to the provider's cache (a provider that reports it; absent when
 * none were).
 */
cacheWriteTokens?: number, };

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
argumentsDelta: string, 
/**
 * How the tool presents the call from the arguments streamed so far, when that changed
 * since the last one sent: sent at most every few hundred milliseconds once the
 * arguments are long, so every client can name a call while the model writes it.
 */
presentation?: CallPresentation, };

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
 * For a denied call, why, in words for the person watching: the review rule's own
 * `reason`, or what the user said declining it. The model's message, with what it should
 * do instead, stays in `content`. Absent for every other result, and when there is no
 * such reason (a client shows a generic one).
 */
userReason?: string, 
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
ask: RequestAsk, 
/**
 * For a request of a parent session that a child's call opened: the child's session id
 * (the child's own request is answered through this one).
 */
childSessionId?: string, 
/**
 * For a request a child's call opened: the child's name, or its agent when it has none.
 */
childName?: string, };

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

export type ErrorCode = "UNKNOWN_TOOL" | "INVALID_ARGUMENTS" | "CODE_MODE_ONLY" | "AUTO_REVIEW_DENIED" | "AUTO_REVIEW_FAILED" | "AUTO_REVIEW_TIMEOUT" | "TIMEOUT" | "INTERRUPTED" | "TOOL_FAILED";

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

export type ProjectContext = { 
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

export type Phase = "preparing" | "running" | "waiting" | "done";

export type ToolOutcome = { 
/**
 * Ok, error, denied or interrupted.
 */
status: CallStatus, 
/**
 * Why it failed, when it did.
 */
errorCode?: ErrorCode, 
/**
 * What the model saw: the output, or the error message.
 */
content: Array<ContentBlock>, 
/**
 * For a denied call, the reason for the person watching (see the `tool.result` event).
 */
userReason?: string, 
/**
 * The structured output, when the call succeeded.
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

export type ToolNode = { 
/**
 * The call's id, the same through every phase.
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
 * The step of its turn the call was made in (a nested call: its `run_code` call's step);
 * absent for a call seen before any `step.started` of its turn.
 */
step?: number, 
/**
 * Where the call is in its life.
 */
phase: Phase, 
/**
 * When the model named the tool (its first `tool.preparing`); absent for a call that was
 * never seen preparing (a nested call, or one dispatched in one piece).
 */
preparingAt?: string, 
/**
 * When it was dispatched (`tool.start`).
 */
startedAt?: string, 
/**
 * When it ended (`tool.result`).
 */
finishedAt?: string, 
/**
 * The final arguments, once dispatched (any JSON value: the runtime records what it got).
 */
arguments?: unknown, 
/**
 * The card's header: while the arguments stream, as the tool presents them so far; once
 * dispatched, as it presents the final ones.
 */
presentation?: CallPresentation, 
/**
 * The detail shown while running.
 */
beforeDetail?: Detail, 
/**
 * Live output received so far: all of it, or its start when it outgrew the live bound
 * (see [`crate::live`]; the result holds the whole output).
 */
progress: string, 
/**
 * Bytes of live output not shown between `progress` and `progress_tail`; absent when none.
 */
progressOmittedBytes?: number, 
/**
 * The latest live output, past what `progress` holds and what was left out; absent while
 * `progress` holds all of it.
 */
progressTail?: string, 
/**
 * How the call ended, once it did.
 */
outcome?: ToolOutcome, 
/**
 * The requests the call opened (an approval, questions), in order; the last may still
 * wait for an answer.
 */
requests: Array<RequestNode>, 
/**
 * Calls made by this call's code, in order.
 */
subCalls: Array<ToolNode>, 
/**
 * The child session the call started (an `agent` call), from its `agent.started`.
 */
child?: ChildLink, 
/**
 * The reviewer model's judgement of the call, from its `tool.reviewed`.
 */
review?: AutoReviewRecord, };

export type RequestNode = { 
/**
 * The request's id, which an answer names.
 */
requestId: string, 
/**
 * What is asked.
 */
ask: RequestAsk, 
/**
 * When it was opened.
 */
openedAt: string, 
/**
 * How it ended; absent while it waits for an answer.
 */
resolution?: RequestResolution, 
/**
 * Who ended it (`runtime` for a cancellation, else the answering host's name).
 */
resolvedBy?: string, 
/**
 * When it was answered or cancelled.
 */
resolvedAt?: string, 
/**
 * For a request a child's call opened: the child's session id.
 */
childSessionId?: string, 
/**
 * For a request a child's call opened: the child's name, or its agent when it has none.
 */
childName?: string, };

export type TurnItem = { "type": "text", 
/**
 * The step it belongs to.
 */
step: number, 
/**
 * The text streamed so far.
 */
text: string, } | { "type": "reasoning", 
/**
 * The step it belongs to.
 */
step: number, 
/**
 * The reasoning text streamed so far.
 */
text: string, } | { "type": "tool", 
/**
 * The call.
 */
node: ToolNode, };

export type TurnNode = { 
/**
 * The turn's id (empty for events logged before any `turn.started`).
 */
turnId: string, 
/**
 * The user's prompt.
 */
prompt: string, 
/**
 * Assistant text, reasoning and root calls, in order.
 */
items: Array<TurnItem>, 
/**
 * Why the turn ended, once it did.
 */
finished?: FinishReason, 
/**
 * The message of a turn that ended in error.
 */
message?: string, 
/**
 * Tokens used by the turn's steps so far.
 */
usage: Usage, 
/**
 * The latest step started in the turn (the one its next calls belong to); absent before
 * its first.
 */
latestStep?: number, };

export type CompactionNode = { 
/**
 * The `seq` of its `context.compacted` event.
 */
seq: number, 
/**
 * How many turns came before it (it sits after the turn of that number).
 */
afterTurns: number, 
/**
 * The summary, what the model now receives for everything before it.
 */
summary: string, 
/**
 * Tokens used writing the summary.
 */
usage: Usage, 
/**
 * The estimated size of a request before it.
 */
estimatedTokensBefore: number, 
/**
 * The estimated size of a request after it.
 */
estimatedTokensAfter: number, };

export type ChildLink = { 
/**
 * The child's session id.
 */
sessionId: string, 
/**
 * The agent it runs.
 */
agent: string, 
/**
 * The short description the parent gave it.
 */
description: string, 
/**
 * The name the parent gave it, when it did.
 */
name?: string, 
/**
 * Whether it runs in the background.
 */
background: boolean, };

export type ChildStatus = "running" | "idle" | "completed" | "failed" | "interrupted" | "out_of_budget";

export type ChildUsage = { 
/**
 * Prompt tokens sent.
 */
inputTokens: number, 
/**
 * Tokens generated.
 */
outputTokens: number, 
/**
 * Prompt tokens served from the provider's cache (part of `inputTokens`); absent when none.
 */
cacheReadTokens?: number, 
/**
 * Prompt tokens written to the provider's cache (part of `inputTokens`); absent when none.
 */
cacheWriteTokens?: number, 
/**
 * The cost in US dollars, when the host knows the model's price.
 */
costUsd?: number, };

export type ChildRecord = { 
/**
 * The child's session id.
 */
sessionId: string, 
/**
 * The agent it runs (`explore`, `general`, or a workspace agent file's name).
 */
agent: string, 
/**
 * The short description the parent gave it.
 */
description: string, 
/**
 * The name the parent gave it, when it did.
 */
name?: string, 
/**
 * Whether it runs in the background (the `agent` call returned at once).
 */
background: boolean, 
/**
 * Where it stands.
 */
status: ChildStatus, 
/**
 * Its final answer (the text of its last step), once it ended with one.
 */
answer?: string, 
/**
 * Why it failed, or what stopped it.
 */
error?: string, 
/**
 * Model steps taken so far.
 */
steps: number, 
/**
 * Tokens and cost so far.
 */
usage: ChildUsage, 
/**
 * Wall time so far, or until it ended, in milliseconds.
 */
durationMs: number, };

export type AgentWaitOutput = { 
/**
 * The children that ended and whose result was not delivered before, each delivered
 * exactly once.
 */
finished: Array<ChildRecord>, 
/**
 * The ids of the children waited for that still run.
 */
running: Array<string>, 
/**
 * Whether the wait ended at `timeout_ms` with children still running.
 */
timedOut: boolean, };

export type AgentListOutput = { 
/**
 * The session's children, oldest first.
 */
children: Array<ChildRecord>, };

export type Delivery = "now" | "queued";

export type AgentSendOutput = { 
/**
 * The recipient as given (a session id or a name).
 */
to: string, 
/**
 * The recipient's session id.
 */
sessionId: string, 
/**
 * Whether the message is seen at the recipient's next step or after its current one.
 */
delivered: Delivery, };

export type AgentStartedEvent = { 
/**
 * The `agent` call that created the child.
 */
callId: string, 
/**
 * The `run_code` call that made that call, for a code-mode call.
 */
parentCallId?: string, 
/**
 * The child's session id.
 */
childSessionId: string, 
/**
 * The agent the child runs.
 */
agent: string, 
/**
 * The short description the parent gave it.
 */
description: string, 
/**
 * The name the parent gave it, when it did.
 */
name?: string, 
/**
 * Whether it runs in the background.
 */
background: boolean, };

export type AgentFinishedEvent = { 
/**
 * The child's session id.
 */
childSessionId: string, 
/**
 * How it ended.
 */
record: ChildRecord, };

export type AgentDeliveredEvent = { 
/**
 * The child's session id.
 */
childSessionId: string, };

export type AgentMessageEvent = { 
/**
 * The sender's session id.
 */
fromSessionId: string, 
/**
 * The sender's name, when it has one (a named teammate); absent for the parent.
 */
fromName?: string, 
/**
 * The message.
 */
text: string, };

export type TaskStatus = "pending" | "in_progress" | "completed" | "cancelled";

export type TaskNote = { 
/**
 * Who wrote it: `lead` or a teammate's name.
 */
by: string, 
/**
 * The note.
 */
text: string, 
/**
 * When, RFC 3339 UTC.
 */
at: string, };

export type TaskRecord = { 
/**
 * Its id: `1`, `2`, … in creation order within the team.
 */
id: string, 
/**
 * What to do, in a line.
 */
title: string, 
/**
 * More about it, when given.
 */
description?: string, 
/**
 * Where it stands.
 */
status: TaskStatus, 
/**
 * Who does it: `lead` or a teammate's name.
 */
assignee?: string, 
/**
 * The ids of the tasks it waits for: it cannot go `in_progress` while one is open.
 */
blockedBy: Array<string>, 
/**
 * Notes, oldest first.
 */
notes: Array<TaskNote>, 
/**
 * Who created it: `lead` or a teammate's name.
 */
createdBy: string, 
/**
 * When it was created, RFC 3339 UTC.
 */
createdAt: string, 
/**
 * When it last changed, RFC 3339 UTC.
 */
updatedAt: string, };

export type TaskCreatedEvent = { 
/**
 * The new task.
 */
task: TaskRecord, 
/**
 * Who created it: `lead` or a teammate's name.
 */
by: string, };

export type TaskUpdatedEvent = { 
/**
 * The task as it is now.
 */
task: TaskRecord, 
/**
 * Who changed it: `lead` or a teammate's name.
 */
by: string, };

export type TaskCreateOutput = { 
/**
 * The new task.
 */
task: TaskRecord, };

export type TaskUpdateOutput = { 
/**
 * The task as it is now.
 */
task: TaskRecord, 
/**
 * The task as it was before the change.
 */
previous: TaskRecord, };

export type TaskListOutput = { 
/**
 * The team's tasks, in creation order.
 */
tasks: Array<TaskRecord>, };

export type GoalStatus = "active" | "paused" | "blocked" | "budget_limited" | "complete" | "cleared";

export type PauseCause = "user" | "stalled" | "restart";

export type GoalActor = "model" | "user" | "runtime";

export type GoalBudget = { 
/**
 * Tokens (input and output) its turns may use.
 */
tokens?: number, 
/**
 * Seconds of wall time its turns may take.
 */
seconds?: number, 
/**
 * Turns it may take.
 */
turns?: number, };

export type GoalUsage = { 
/**
 * Tokens (input and output) of its turns.
 */
tokens: number, 
/**
 * Seconds of wall time spent in its turns.
 */
seconds: number, 
/**
 * Turns run while it was active.
 */
turns: number, };

export type GoalRecord = { 
/**
 * The goal's id, unique in its session.
 */
id: string, 
/**
 * What the session works toward.
 */
objective: string, 
/**
 * Where it stands.
 */
status: GoalStatus, 
/**
 * Why it is paused, while it is.
 */
pausedBecause?: PauseCause, 
/**
 * What it may spend.
 */
budget: GoalBudget, 
/**
 * What it spent so far.
 */
usage: GoalUsage, 
/**
 * The ids of the checks that decide its completion; empty for every declared check.
 */
checks: Array<string>, 
/**
 * The last run of its checks the runtime made for it.
 */
lastChecks?: ChecksRunOutput, 
/**
 * Why the last change was made.
 */
reason?: string, 
/**
 * What the model offered as evidence with `complete`.
 */
evidence?: string, 
/**
 * When it was created, RFC 3339 UTC.
 */
createdAt: string, 
/**
 * When it last changed, RFC 3339 UTC.
 */
updatedAt: string, };

export type GoalCreatedEvent = { 
/**
 * The goal as created.
 */
goal: GoalRecord, 
/**
 * Who set it.
 */
by: GoalActor, };

export type GoalUpdatedEvent = { 
/**
 * The goal after the change.
 */
goal: GoalRecord, 
/**
 * Who changed it.
 */
by: GoalActor, 
/**
 * Why.
 */
reason: string, };

export type GoalGetOutput = { 
/**
 * The session's latest goal (settled ones included), or null when it never had one.
 */
goal: GoalRecord | null, };

export type GoalVerdict = "complete" | "blocked";

export type GoalUpdateOutput = { 
/**
 * The goal after the call.
 */
goal: GoalRecord, 
/**
 * Whether the change was made (a `complete` whose checks fail is refused).
 */
accepted: boolean, 
/**
 * What happened, for the model: which checks failed, or that none verified the goal.
 */
message: string, 
/**
 * The run of the goal's checks a `complete` made.
 */
checks?: ChecksRunOutput, };

export type SetGoal = { 
/**
 * What the session should work toward (not only spaces).
 */
objective: string, 
/**
 * Tokens its turns may use.
 */
tokenBudget?: number, 
/**
 * Seconds its turns may take.
 */
timeBudget?: number, 
/**
 * Turns it may take.
 */
maxTurns?: number, 
/**
 * The ids of the checks that decide its completion; every declared check when omitted.
 */
checks?: Array<string>, };

export type ResumeGoal = { 
/**
 * The new token budget.
 */
tokenBudget?: number, 
/**
 * The new time budget, in seconds.
 */
timeBudget?: number, 
/**
 * The new turns budget.
 */
maxTurns?: number, };

export type LoopUntil = { 
/**
 * The ids of the declared checks that must all pass after an iteration.
 */
checks?: Array<string>, 
/**
 * The text the model writes as `<promise>TEXT</promise>` in an iteration's final answer
 * when it judges the work done. With checks declared too, the loop stops only when the
 * checks pass; the promise alone decides only when no check is declared.
 */
promise?: string, };

export type LoopBudget = { 
/**
 * Tokens (input and output).
 */
tokens?: number, 
/**
 * Cost in US dollars. Refused when a loop starts: usage counts tokens only, and prices are
 * known only to the terminal's display, never to the runtime running the loop.
 */
costUsd?: number, 
/**
 * Seconds of wall time since the loop started.
 */
durationSecs?: number, };

export type LoopStatus = "running" | "finished";

export type LoopStopReason = "checks_passed" | "promise_seen" | "max_iterations" | "budget" | "stalled" | "stopped" | "failed";

export type IterationStatus = "running" | "finished" | "interrupted" | "failed";

export type FileChange = { 
/**
 * The path, relative to the workspace, with `/` separators.
 */
path: string, 
/**
 * Lines added (0 when only file hashes were compared, or for a binary file).
 */
insertions: number, 
/**
 * Lines removed (0 when only file hashes were compared, or for a binary file).
 */
deletions: number, 
/**
 * `added`, `modified` or `deleted`.
 */
change: string, };

export type IterationCheck = { 
/**
 * The check's id.
 */
id: string, 
/**
 * Whether it passed.
 */
conclusion: CheckConclusion, 
/**
 * Its one-line summary.
 */
summary?: string, };

export type LoopIteration = { 
/**
 * Its number, from 1.
 */
number: number, 
/**
 * The child session its turn ran in: a fresh one per iteration, or, with `freshContext:
 * false`, the loop's one session, the same for every iteration.
 */
sessionId?: string, 
/**
 * Where it stands.
 */
status: IterationStatus, 
/**
 * When it started, RFC 3339 UTC.
 */
startedAt: string, 
/**
 * When it ended, RFC 3339 UTC.
 */
endedAt?: string, 
/**
 * How long it took, in milliseconds.
 */
durationMs?: number, 
/**
 * What it changed in the workspace (a git diff stat when the workspace is a repository,
 * else a comparison of file hashes).
 */
files?: Array<FileChange>, 
/**
 * The conclusions of the loop's checks after it.
 */
checks?: Array<IterationCheck>, 
/**
 * Input tokens of its turn (and of the compaction before it, with `freshContext: false`).
 */
inputTokens: number, 
/**
 * Output tokens of its turn (and of the compaction before it, with `freshContext: false`).
 */
outputTokens: number, 
/**
 * Its cost in US dollars, when the runtime knows the model's price (it never does yet:
 * prices are the terminal's display setting), else absent.
 */
costUsd?: number, 
/**
 * Whether its final answer held the promise.
 */
promiseSeen: boolean, 
/**
 * Why the loop goes on or stops after it, one sentence; set when it ended.
 */
outcome?: string, };

export type LoopRecord = { 
/**
 * The loop's id, unique in its session.
 */
loopId: string, 
/**
 * The prompt every iteration gets.
 */
prompt: string, 
/**
 * When it is done.
 */
until: LoopUntil, 
/**
 * The most iterations it runs.
 */
maxIterations: number, 
/**
 * Whether each iteration runs in a fresh child session; `false` when every iteration is
 * the next turn of one child session of the loop, compacted before each iteration after
 * the first.
 */
freshContext: boolean, 
/**
 * What it may spend.
 */
budget?: LoopBudget, 
/**
 * Whether it still runs.
 */
status: LoopStatus, 
/**
 * Why it stopped, once it has.
 */
stopReason?: LoopStopReason, 
/**
 * Its iterations so far, in order.
 */
iterations?: Array<LoopIteration>, 
/**
 * When it started, RFC 3339 UTC.
 */
startedAt: string, 
/**
 * When it stopped, RFC 3339 UTC.
 */
endedAt?: string, 
/**
 * Input tokens of all its iterations.
 */
inputTokens: number, 
/**
 * Output tokens of all its iterations.
 */
outputTokens: number, 
/**
 * The cost of all its iterations in US dollars, when every price was known.
 */
costUsd?: number, };

export type LoopStartedEvent = { 
/**
 * The loop as started.
 */
loop: LoopRecord, };

export type LoopIterationEvent = { 
/**
 * The loop's id.
 */
loopId: string, 
/**
 * The iteration as it stands.
 */
iteration: LoopIteration, };

export type LoopFinishedEvent = { 
/**
 * The loop as it ended.
 */
loop: LoopRecord, };

export type StartLoop = { 
/**
 * The prompt every iteration gets (not only spaces).
 */
prompt: string, 
/**
 * When the loop is done: checks that must pass, a promise the model may write, or both.
 */
until: LoopUntil, 
/**
 * The most iterations to run (1 to 100).
 */
maxIterations: number, 
/**
 * Whether each iteration runs in a fresh child session (`true`, the default); `false` runs
 * every iteration as the next turn of one child session of the loop, compacted before
 * each iteration after the first.
 */
freshContext?: boolean, 
/**
 * What the loop may spend.
 */
budget?: LoopBudget, };

export type StopLoop = { 
/**
 * The loop's id, as `loop_start` returned it.
 */
id: string, };

export type LoopStatusQuery = { 
/**
 * One loop's id; every loop of the session when omitted.
 */
id?: string, };

export type LoopOutput = { 
/**
 * The loop as it stands.
 */
loop: LoopRecord, };

export type LoopStatusOutput = { 
/**
 * The loops asked for, oldest first.
 */
loops: Array<LoopRecord>, };

export type ScheduleTarget = "this_session" | "new_session";

export type CatchUp = "once" | "skip";

export type ScheduleStatus = "active" | "done" | "expired" | "deleted";

export type RunOutcome = "running" | "completed" | "failed" | "interrupted" | "out_of_budget" | "skipped";

export type ScheduleRun = { 
/**
 * The scheduled time this run is for, RFC 3339 UTC.
 */
fireTime: string, 
/**
 * When the run started, RFC 3339 UTC.
 */
startedAt: string, 
/**
 * When the run ended, RFC 3339 UTC; absent while it runs.
 */
endedAt?: string, 
/**
 * The session the turn ran in.
 */
sessionId: string, 
/**
 * The turn it started, once known.
 */
turnId?: string, 
/**
 * How it went.
 */
outcome: RunOutcome, 
/**
 * Whether it stands for fires missed while no server ran, run late.
 */
caughtUp: boolean, 
/**
 * Why it failed, was skipped or was interrupted.
 */
message?: string, };

export type ScheduleRecord = { 
/**
 * The schedule's id.
 */
id: string, 
/**
 * The session that created it (and runs it when the target is `this_session`).
 */
sessionId: string, 
/**
 * What each run asks.
 */
prompt: string, 
/**
 * A five-field cron expression; exactly one of `cron`, `everySeconds` and `at` is set.
 */
cron?: string, 
/**
 * A fixed interval, in seconds.
 */
everySeconds?: number, 
/**
 * A single fire time, RFC 3339.
 */
at?: string, 
/**
 * The IANA time zone the cron is read in; `UTC` by default.
 */
timezone: string, 
/**
 * The schedule in words: "every weekday at 09:00 (Europe/Paris)".
 */
description: string, 
/**
 * The agent a `new_session` run uses; the creating session's when absent.
 */
agent?: string, 
/**
 * Where runs happen.
 */
target: ScheduleTarget, 
/**
 * What happens to fires missed while no server ran.
 */
catchUp: CatchUp, 
/**
 * After this time it fires no more, RFC 3339.
 */
expires?: string, 
/**
 * Where it stands.
 */
status: ScheduleStatus, 
/**
 * When it was created, RFC 3339 UTC.
 */
createdAt: string, 
/**
 * The next (up to) three fire times, RFC 3339 UTC.
 */
nextFires: Array<string>, 
/**
 * Its latest run.
 */
lastRun?: ScheduleRun, 
/**
 * How many runs so far.
 */
runs: number, };

export type ScheduleCreatedEvent = { 
/**
 * The schedule as created.
 */
schedule: ScheduleRecord, };

export type ScheduleDeletedEvent = { 
/**
 * The deleted schedule's id.
 */
scheduleId: string, };

export type ScheduleFiredEvent = { 
/**
 * The schedule that fired.
 */
scheduleId: string, 
/**
 * The run it started.
 */
run: ScheduleRun, };

export type ScheduleFinishedEvent = { 
/**
 * The schedule whose run ended.
 */
scheduleId: string, 
/**
 * The ended run.
 */
run: ScheduleRun, };

export type ScheduleOutput = { 
/**
 * The schedule after the call.
 */
schedule: ScheduleRecord, };

export type ScheduleListOutput = { 
/**
 * The schedules, newest first.
 */
schedules: Array<ScheduleRecord>, };

export type CreateSchedule = { 
/**
 * What each run asks (not only spaces).
 */
prompt: string, 
/**
 * A five-field cron expression (minute hour day-of-month month day-of-week).
 */
cron?: string, 
/**
 * An interval: "90s", "15m", "2h", "1d" or a number of seconds; at least a minute.
 */
every?: string, 
/**
 * A single fire time, RFC 3339, in the future.
 */
at?: string, 
/**
 * The IANA time zone the cron is read in; `UTC` when omitted.
 */
timezone?: string, 
/**
 * The agent a `new_session` run uses.
 */
agent?: string, 
/**
 * Where runs happen; `this_session` when omitted.
 */
target?: ScheduleTarget, 
/**
 * What happens to missed fires; `once` when omitted.
 */
catchUp?: CatchUp, 
/**
 * After this time it fires no more, RFC 3339.
 */
expires?: string, };

export type ReviewVerdict = "allow" | "deny" | "failed" | "timed_out";

export type ReviewRisk = "low" | "medium" | "high";

export type ReviewFallback = "asked_person" | "unattended_policy";

export type AutoReviewRecord = { 
/**
 * The reviewer's model id (`provider:name`).
 */
reviewer: string, 
/**
 * What it decided.
 */
verdict: ReviewVerdict, 
/**
 * How risky it judged the call; absent when it failed or timed out.
 */
risk?: ReviewRisk, 
/**
 * One line for the person: why it allowed or refused, or what went wrong.
 */
userReason: string, 
/**
 * Wall time of the review, in milliseconds.
 */
latencyMs: number, 
/**
 * Input tokens the review used.
 */
inputTokens: number, 
/**
 * Output tokens the review used.
 */
outputTokens: number, 
/**
 * What happened after a failed or timed-out review.
 */
fallback?: ReviewFallback, };

export type ReviewGrant = { 
/**
 * The grant's id, unique in its session.
 */
id: string, 
/**
 * The refused call the person allowed.
 */
callId: string, 
/**
 * The tool it is bound to.
 */
toolName: string, 
/**
 * The canonical arguments it is bound to.
 */
arguments: unknown, 
/**
 * When it was made, RFC 3339 UTC.
 */
grantedAt: string, 
/**
 * The call that used it, once one did.
 */
usedBy?: string, };

export type ToolReviewedEvent = { 
/**
 * The reviewed call.
 */
callId: string, 
/**
 * The `run_code` call that made it, for a code-mode call.
 */
parentCallId?: string, 
/**
 * The review.
 */
review: AutoReviewRecord, };

export type ReviewGrantedEvent = { 
/**
 * The grant.
 */
grant: ReviewGrant, };

export type ReviewCircuitOpenEvent = { 
/**
 * The turn it paused.
 */
turnId: string, 
/**
 * Denials in a row in that turn.
 */
denialsInARow: number, 
/**
 * Denials among the session's last 50 reviews.
 */
denialsInWindow: number, 
/**
 * What the person is told.
 */
message: string, };

export type ReviewEntry = { 
/**
 * The call.
 */
callId: string, 
/**
 * Its tool.
 */
toolName: string, 
/**
 * Its arguments.
 */
arguments: unknown, 
/**
 * Its review.
 */
review: AutoReviewRecord, 
/**
 * When it was reviewed, RFC 3339 UTC.
 */
at: string, 
/**
 * Whether a person allowed it afterwards.
 */
granted: boolean, };

export type ReviewList = { 
/**
 * Reviewed calls that were refused or failed, newest first, at most 50.
 */
reviews: Array<ReviewEntry>, };

export type AllowCall = { 
/**
 * Queue a turn telling the model it may run the call again (default true).
 */
retry?: boolean, };

export type SessionStatus = "idle" | "running";

export type SessionInfo = { 
/**
 * The session's id.
 */
id: string, 
/**
 * The workspace folder, absolute.
 */
workspace: string, 
/**
 * The agent's name.
 */
agent: string, 
/**
 * The agent file, when there is one.
 */
agentFile: string | null, 
/**
 * The model, as `provider:name`.
 */
model: string, 
/**
 * The title: the first prompt (its first line, shortened) until someone renames it.
 */
title: string | null, 
/**
 * When it was created, RFC 3339 UTC.
 */
createdAt: string, 
/**
 * The time of its latest event (its creation before any), RFC 3339 UTC.
 */
lastActivity: string, 
/**
 * Whether a turn is running.
 */
status: SessionStatus, 
/**
 * Turns started so far.
 */
turns: number, 
/**
 * The `seq` of its latest event; 0 before any.
 */
headSeq: number, 
/**
 * For a child session (a subagent): the session that started it; null for a top-level
 * session.
 */
parentSessionId: string | null, 
/**
 * For a child session: the parent's `agent` call that started it; null for a top-level
 * session.
 */
parentCallId: string | null, 
/**
 * How many children (subagents and teammates, of any status) it started.
 */
childCount: number, };

export type SessionPage = { 
/**
 * The sessions, newest activity first.
 */
sessions: Array<SessionInfo>, 
/**
 * The cursor of the next page, when there is one.
 */
next: string | null, };

export type SessionView = { 
/**
 * The turn running now, if one is.
 */
activeTurn: string | null, 
/**
 * The requests waiting for an answer, in the order opened.
 */
openRequests: Array<RequestOpenedEvent>, 
/**
 * The sessions it started (subagents), oldest first.
 */
children: Array<SessionInfo>, 
/**
 * Whether this server process runs the session now.
 */
hosted: boolean, 
/**
 * The session's latest goal (settled ones included), folded from its goal events; null
 * when it never had one.
 */
goal: GoalRecord | null, 
/**
 * The home folder of the user the server runs as (absolute, POSIX), when known: a client
 * writes a path under it as `~/…` once it is not under the session's `workspace` (the
 * folder its tools work in).
 */
home?: string, 
/**
 * The session's id.
 */
id: string, 
/**
 * The workspace folder, absolute.
 */
workspace: string, 
/**
 * The agent's name.
 */
agent: string, 
/**
 * The agent file, when there is one.
 */
agentFile: string | null, 
/**
 * The model, as `provider:name`.
 */
model: string, 
/**
 * The title: the first prompt (its first line, shortened) until someone renames it.
 */
title: string | null, 
/**
 * When it was created, RFC 3339 UTC.
 */
createdAt: string, 
/**
 * The time of its latest event (its creation before any), RFC 3339 UTC.
 */
lastActivity: string, 
/**
 * Whether a turn is running.
 */
status: SessionStatus, 
/**
 * Turns started so far.
 */
turns: number, 
/**
 * The `seq` of its latest event; 0 before any.
 */
headSeq: number, 
/**
 * For a child session (a subagent): the session that started it; null for a top-level
 * session.
 */
parentSessionId: string | null, 
/**
 * For a child session: the parent's `agent` call that started it; null for a top-level
 * session.
 */
parentCallId: string | null, 
/**
 * How many children (subagents and teammates, of any status) it started.
 */
childCount: number, };

export type CreateSession = { 
/**
 * The folder the tools work in, relative to the server's workspace or absolute; the
 * server's workspace when omitted. It must lie under the server's workspace or a folder
 * the server was started with `--allow-root` (links resolved), else 403 `outside_roots`.
 */
workspace?: string, 
/**
 * The `.agent` file, relative to the workspace or absolute; the server's agent when
 * omitted. It must lie under the same folders as `workspace`.
 */
agentFile?: string, 
/**
 * The model (`openai:NAME`, `anthropic:NAME`, `scripted:FILE`); the server's, else the
 * agent file's, when omitted. A `scripted:` file must lie under the same folders as
 * `workspace`.
 */
model?: string, 
/**
 * A title (1 to 200 characters, not only spaces); the first prompt gives one when
 * omitted.
 */
title?: string, };

export type UpdateSession = { 
/**
 * The new title (1 to 200 characters, not only spaces).
 */
title: string, };

export type ListSessions = { 
/**
 * The most sessions on the page (1 to 500, default 50).
 */
limit?: number, 
/**
 * The `next` of the previous page.
 */
after?: string, 
/**
 * Only sessions whose title contains this text (case-insensitive).
 */
q?: string, 
/**
 * Only sessions of this workspace (its absolute path).
 */
workspace?: string, 
/**
 * Only the children (subagent sessions) of this session; without it, only top-level
 * sessions are listed.
 */
parent?: string, };

export type StartTurn = { 
/**
 * What to ask the agent (not only spaces).
 */
prompt: string, 
/**
 * An id the client chooses for this turn (at most 128 characters); sending the same one
 * again never starts a second turn, so a request can be retried safely.
 */
clientTurnId?: string, };

export type TurnAccepted = { 
/**
 * The turn's id (`turn.started`'s `turnId`).
 */
turnId: string, 
/**
 * The client's id for it, when it gave one.
 */
clientTurnId: string | null, 
/**
 * True when this `clientTurnId` had started the turn already: nothing new was started.
 */
repeated: boolean, };

export type Interrupted = { 
/**
 * True when a running turn was told to stop; false when none was running.
 */
interrupted: boolean, };

export type EventsQuery = { 
/**
 * Events after this `seq` (0, the default, for all).
 */
after?: number, 
/**
 * The most events on the page (1 to 1000, default 500).
 */
limit?: number, };

export type EventPage = { 
/**
 * The events, in order.
 */
events: Array<Event>, 
/**
 * The session's head when the page was read.
 */
headSeq: number, 
/**
 * Whether more events follow the page (ask again after its last `seq`).
 */
more: boolean, };

export type StreamQuery = { 
/**
 * Stream the events after this `seq`; a `Last-Event-ID` header wins over it.
 */
after?: number, };

export type MultiStreamQuery = { 
/**
 * The sessions and where to start in each: `ID:SEQ` items joined by `,`
 * (`a1:0,b2:57`); a `Last-Event-ID` header (the `id` of the last event received) wins.
 */
sessions: string, };

export type SessionEvent = { 
/**
 * The session it belongs to.
 */
sessionId: string, 
/**
 * The event.
 */
event: Event, };

export type SnapshotQuery = { 
/**
 * The most turns to return (1 to 200, default 20): the latest ones before `before`.
 */
turns?: number, 
/**
 * Return turns before this index (0 is the first turn); the latest when omitted.
 */
before?: number, };

export type Snapshot = { 
/**
 * The `seq` of the last event folded in: follow the events after it.
 */
headSeq: number, 
/**
 * The number of turns in the session.
 */
totalTurns: number, 
/**
 * The index of the first turn returned (0 is the session's first turn).
 */
firstTurn: number, 
/**
 * The turns, oldest first.
 */
turns: Array<TurnNode>, 
/**
 * Every compaction of the session, oldest first, whichever turns are returned: each
 * `afterTurns` counts from the session's first turn.
 */
compactions: Array<CompactionNode>, 
/**
 * Raw argument text of calls still preparing, by call id.
 */
preparingArguments: { [key in string]: string }, 
/**
 * The turn running now, if one is.
 */
activeTurn: string | null, };

export type OpenRequests = { 
/**
 * The requests, in the order opened.
 */
requests: Array<RequestOpenedEvent>, };

export type RequestAnswer = { "reply": "approve", 
/**
 * Who answers (a tab's id), kept in the log as `web:ID`.
 */
clientId?: string, } | { "reply": "approve_for_session", 
/**
 * What is allowed from now on; it must cover the call asked about.
 */
grant: SessionGrant, 
/**
 * Who answers (a tab's id), kept in the log as `web:ID`.
 */
clientId?: string, } | { "reply": "deny", 
/**
 * Why, in the person's words.
 */
reason?: string, 
/**
 * Who answers (a tab's id), kept in the log as `web:ID`.
 */
clientId?: string, } | { "reply": "answer", 
/**
 * The answers, paired with the questions by id.
 */
answers: Array<Answer>, 
/**
 * Who answers (a tab's id), kept in the log as `web:ID`.
 */
clientId?: string, } | { "reply": "dismiss", 
/**
 * Who answers (a tab's id), kept in the log as `web:ID`.
 */
clientId?: string, };

export type RequestResolved = { 
/**
 * The request.
 */
requestId: string, 
/**
 * The answer as recorded.
 */
resolution: RequestResolution, 
/**
 * Who answered, as recorded.
 */
resolvedBy: string, };

export type FileQuery = { 
/**
 * The file, relative to the session's workspace (an absolute path must lie inside it);
 * not only spaces.
 */
path: string, };

export type TextFile = { 
/**
 * The file's canonical path relative to the workspace.
 */
path: string, 
/**
 * Its text.
 */
text: string, 
/**
 * Its size in bytes.
 */
size: number, 
/**
 * Its number of lines.
 */
totalLines: number, 
/**
 * The highlighter's language name, from the extension (`text` when unknown).
 */
language: string, };

export type AuthRequest = { 
/**
 * The token from the URL's fragment (`#token=…`).
 */
token: string, };

export type ServerInfo = { 
/**
 * Qilin's version.
 */
version: string, 
/**
 * The event vocabulary's version (`session.started`'s `protocolVersion`).
 */
protocolVersion: number, 
/**
 * The workspace new sessions work in unless told otherwise.
 */
workspace: string, 
/**
 * The agent file new sessions run unless told otherwise.
 */
agentFile: string | null, 
/**
 * The model new sessions use unless told otherwise.
 */
model: string | null, 
/**
 * The demo session, under `qilin serve --demo`.
 */
demoSession: string | null, 
/**
 * Whether the page's files are built into this binary.
 */
webClient: boolean, };

export type EndReason = "deleted" | "stopping" | "lagging";

export type StreamEnd = { 
/**
 * The session whose events end. A stream of several sessions ends each deleted session
 * on its own, and the stream as a whole (`stopping`, `lagging`) with this null.
 */
sessionId: string | null, 
/**
 * Why.
 */
reason: EndReason, };

export type ErrorBody = { 
/**
 * A stable code a client can branch on (`turn_running`, `unknown_session`, …).
 */
code: string, 
/**
 * What is wrong and what is expected, for a person.
 */
message: string, 
/**
 * The turn concerned (`turn_running`: the one running).
 */
turnId?: string, 
/**
 * Who answered a request first (`already_answered`).
 */
resolvedBy?: string, 
/**
 * The server process that runs the session (`owned_elsewhere`).
 */
owner?: string, };

export type SearchSessions = { 
/**
 * The words to find (1 to 1000 characters, not only spaces): every word must occur in
 * a hit; the words as one phrase rank first. Taken literally: quotes, `*`, `-` and the
 * like are no operators.
 */
q: string, 
/**
 * Only these sessions: their ids joined by `,`.
 */
sessions?: string, 
/**
 * Only sessions of this agent (its name).
 */
agent?: string, 
/**
 * Only hits in calls of this tool (its wire name).
 */
tool?: string, 
/**
 * Only hits in calls that ended so.
 */
status?: CallStatus, 
/**
 * Only events at or after this time: RFC 3339 (`2026-12-02T05:00:00Z`) or a date
 * (`2026-12-02`, midnight UTC).
 */
after?: string, 
/**
 * Only events before this time: RFC 3339 or a date, as `after`.
 */
before?: string, 
/**
 * The most hits on the page (1 to 100, default 20).
 */
limit?: number, 
/**
 * The `next` of the previous page.
 */
cursor?: string, };

export type SearchPage = { 
/**
 * The hits, best first.
 */
hits: Array<SearchHit>, 
/**
 * The cursor of the next page, when more hits follow.
 */
next: string | null, };

export type HitField = "prompt" | "text" | "arguments" | "result" | "error" | "answer" | "tool";

export type SearchHit = { 
/**
 * The session's id.
 */
session: string, 
/**
 * The session's title; empty when it has none yet.
 */
title: string, 
/**
 * The `seq` of the event the hit is in (of a step's text: its first text event).
 */
seq: number, 
/**
 * The turn the event belongs to, counted from 1; null before the first turn.
 */
turn: number | null, 
/**
 * The call the event belongs to, when it is a call's (arguments, result, answer).
 */
callId: string | null, 
/**
 * That call's tool.
 */
tool: string | null, 
/**
 * Which part of the event matched.
 */
field: HitField, 
/**
 * Up to a few dozen words of the matched text around the match, each match as `«…»`,
 * cut text marked `…`.
 */
snippet: string, 
/**
 * When the event happened, RFC 3339 UTC.
 */
time: string, 
/**
 * How well it matches; higher is better. An exact phrase scores above its words apart.
 */
score: number, };

export type SessionSearchOutput = { 
/**
 * The query as searched.
 */
query: string, 
/**
 * The hits, best first.
 */
hits: Array<SearchHit>, 
/**
 * Whether more hits matched than were returned (raise `limit`, or narrow the query).
 */
truncated: boolean, };

export type EventLine = { 
/**
 * The event's `seq`.
 */
seq: number, 
/**
 * When it happened, RFC 3339 UTC.
 */
time: string, 
/**
 * The event's `type` (`turn.started`, `tool.start`, …).
 */
type: string, 
/**
 * The turn it belongs to, counted from 1; null before the first turn.
 */
turn: number | null, 
/**
 * The call it belongs to, for a call's events.
 */
callId: string | null, 
/**
 * The event in a line or a few: the prompt, the text, the call and its arguments, the
 * result's first lines, shortened.
 */
text: string, };

export type SessionEventsOutput = { 
/**
 * The session's id.
 */
session: string, 
/**
 * The session's title; empty when it has none yet.
 */
title: string, 
/**
 * The events, in order (consecutive model text of a step as one line).
 */
events: Array<EventLine>, 
/**
 * Pass as `after` for the next page; null when the page reaches the session's end.
 */
next: number | null, };

export type TrajectoryKind = "turn" | "call" | "text" | "request";

export type TrajectoryStatus = "ok" | "error" | "denied" | "interrupted" | "running";

export type TrajectoryNode = { 
/**
 * The indentation: 0 for a turn, one more than its parent for everything under it (a
 * code-mode call sits one deeper than the `run_code` call that made it).
 */
depth: number, 
/**
 * What the node stands for.
 */
kind: TrajectoryKind, 
/**
 * The turn it belongs to, counted from 1.
 */
turn: number, 
/**
 * The call, for a call or a request.
 */
callId: string | null, 
/**
 * The call's tool, for a call or a request.
 */
tool: string | null, 
/**
 * Where the call or turn stands; null for text.
 */
status: TrajectoryStatus | null, 
/**
 * The node in one line (a prompt, a call's header, text), shortened.
 */
summary: string, 
/**
 * When it started, RFC 3339 UTC, when known.
 */
startedAt: string | null, 
/**
 * How long it ran, in milliseconds, once it ended.
 */
durationMs: number | null, };

export type SessionTrajectoryOutput = { 
/**
 * The session's id.
 */
session: string, 
/**
 * The session's title; empty when it has none yet.
 */
title: string, 
/**
 * The turn asked for (counted from 1), if one was.
 */
turn: number | null, 
/**
 * The call asked for, if one was.
 */
call: string | null, 
/**
 * The nodes, in order, each under the one before it with a smaller depth.
 */
nodes: Array<TrajectoryNode>, 
/**
 * Whether nodes past the cap were left out (the spill file has them all).
 */
truncated: boolean, 
/**
 * The file holding the whole trajectory as text, when it was cut.
 */
spill: string | null, };

export type SpilledOutput = { 
/**
 * Path of the file holding every byte of the output.
 */
path: string, 
/**
 * Size of the whole output in bytes.
 */
totalBytes: number, };

export type CheckStatus = "completed" | "timed_out" | "failed_to_start";

export type CheckConclusion = "success" | "failure" | "neutral";

export type AnnotationLevel = "error" | "warning" | "notice";

export type CheckAnnotation = { 
/**
 * The file, relative to the workspace when inside it, else as the tool printed it.
 */
path: string, 
/**
 * The line, counted from 1, when the tool named one.
 */
line?: number, 
/**
 * The column, counted from 1, when the tool named one.
 */
column?: number, 
/**
 * How serious it is.
 */
level: AnnotationLevel, 
/**
 * What is wrong, on one line (the first line of a longer message), capped.
 */
message: string, };

export type CheckRun = { 
/**
 * The check's id, as declared.
 */
id: string, 
/**
 * What the check verifies, as declared.
 */
description?: string, 
/**
 * The command that ran (`bash -c`, in the workspace root, in the session's sandbox).
 */
command: string, 
/**
 * Whether the command ran to its end.
 */
status: CheckStatus, 
/**
 * Whether the check passed; a timeout or a failed start is always `failure`.
 */
conclusion: CheckConclusion, 
/**
 * Wall time in milliseconds.
 */
durationMs: number, 
/**
 * One line: `12 tests passed`, `2 errors, 1 warning`, `timed out after 60 s`.
 */
summary: string, 
/**
 * The diagnostics parsed from the output, at most [`MAX_ANNOTATIONS`], errors first.
 */
annotations: Array<CheckAnnotation>, 
/**
 * How many annotations were left out past the cap.
 */
omittedAnnotations: number, 
/**
 * The command's combined stdout and stderr; when long, its head and tail with the spill
 * notice naming the file that holds all of it.
 */
output: string, 
/**
 * Where the whole output was saved, when `output` was cut.
 */
spill?: SpilledOutput, 
/**
 * True when this result is an earlier run's, returned because neither the command nor a
 * file the check reads has changed since.
 */
cached: boolean, 
/**
 * When the run started, RFC 3339 in UTC.
 */
startedAt: string, 
/**
 * The command's exit code; absent when it timed out, did not start, or a signal ended it.
 */
exitCode?: number, };

export type ChecksRunOutput = { 
/**
 * One run per check asked for, in declaration order.
 */
runs: Array<CheckRun>, 
/**
 * `failure` when any run failed, else `success` when any passed, else `neutral`.
 */
conclusion: CheckConclusion, 
/**
 * One line: `3 checks: 2 passed, 1 failed`.
 */
summary: string, };

export type LspOperation = "definition" | "references" | "hover" | "document_symbols" | "workspace_symbols" | "implementation" | "incoming_calls" | "outgoing_calls" | "diagnostics";

export type LspSeverity = "error" | "warning" | "information" | "hint";

export type LspContextLine = { 
/**
 * The line's number, from 1.
 */
line: number, 
/**
 * Its text, trailing whitespace trimmed.
 */
text: string, };

export type LspItem = { 
/**
 * Where it is, as the server named it (`file:///…`, or another scheme).
 */
uri: string, 
/**
 * The workspace-relative path; set only for a file inside the workspace.
 */
path?: string, 
/**
 * The start line, from 1.
 */
line: number, 
/**
 * The start character, from 1.
 */
character: number, 
/**
 * The end line, from 1.
 */
endLine?: number, 
/**
 * The end character, from 1.
 */
endCharacter?: number, 
/**
 * The start line's text, trailing whitespace trimmed.
 */
text?: string, 
/**
 * A few lines around a definition (empty otherwise).
 */
context?: Array<LspContextLine>, 
/**
 * The symbol's name (symbols and call-hierarchy items).
 */
name?: string, 
/**
 * The symbol's kind in snake_case: `function`, `class`, `method`, `variable`, ….
 */
kind?: string, 
/**
 * More about the symbol (its signature or container), as the server gave it.
 */
detail?: string, 
/**
 * How deeply a document symbol is nested (0 = top level).
 */
depth?: number, 
/**
 * A diagnostic's severity.
 */
severity?: LspSeverity, 
/**
 * A diagnostic's message.
 */
message?: string, 
/**
 * What produced a diagnostic.
 */
source?: string, 
/**
 * A diagnostic's code.
 */
code?: string, };

export type LspEmptyReason = "no_server" | "starting" | "timed_out" | "crashed" | "not_found";

export type LspEmpty = { 
/**
 * The reason.
 */
reason: LspEmptyReason, 
/**
 * What happened, in a sentence (with the server's progress while it indexes).
 */
message: string, 
/**
 * What to do about it, e.g. how to install the server.
 */
hint?: string, };

export type LspOutput = { 
/**
 * The operation asked.
 */
operation: LspOperation, 
/**
 * The file's language (`python`, `typescript`, `rust`, …), when known.
 */
language?: string, 
/**
 * The server's command name, e.g. `pyright-langserver`.
 */
server?: string, 
/**
 * The target file, workspace-relative.
 */
path?: string, 
/**
 * The asked line, from 1.
 */
line?: number, 
/**
 * The asked character, from 1.
 */
character?: number, 
/**
 * The workspace-symbol query.
 */
query?: string, 
/**
 * What the server returned, sorted by path then line, at most the cap.
 */
items?: Array<LspItem>, 
/**
 * The hover's Markdown.
 */
hover?: string, 
/**
 * Why the result is empty, when `items` is empty and there is no hover.
 */
empty?: LspEmpty, 
/**
 * How many items there were before the cap.
 */
total: number, 
/**
 * Whether items were cut at the cap.
 */
truncated: boolean, 
/**
 * Where the whole list was saved, when it was cut.
 */
spill?: SpilledOutput, };

export type EditDiagnostics = { 
/**
 * The server's command name.
 */
server: string, 
/**
 * Diagnostics new since before the edit, errors first, bounded.
 */
introduced?: Array<LspItem>, 
/**
 * Diagnostics gone since before the edit, bounded.
 */
resolved?: Array<LspItem>, 
/**
 * How many diagnostics the file has after the edit, all severities.
 */
remaining: number, 
/**
 * A remark, e.g. that the server did not report in time.
 */
note?: string, };

export type LspServerState = "not_installed" | "stopped" | "starting" | "indexing" | "ready" | "crashed";

export type LspServerStatus = { 
/**
 * The language it serves.
 */
language: string, 
/**
 * Its command.
 */
server: string, 
/**
 * Where it stands.
 */
state: LspServerState, 
/**
 * Its process id while running.
 */
pid?: number, 
/**
 * How many times it was restarted after a crash.
 */
restarts: number, 
/**
 * Whether it runs (or will run) inside the sandbox: the workspace read-only to it, its
 * writes only in a private temp folder. `false` when the user turned the sandbox off.
 */
sandboxed: boolean, 
/**
 * Whether it may reach the network: `network: true` in `.qilin/lsp.yaml`, or not
 * sandboxed.
 */
network: boolean, 
/**
 * Its last progress message while indexing.
 */
progress?: string, 
/**
 * The last error it met.
 */
lastError?: string, 
/**
 * How to install it, when not installed.
 */
hint?: string, };

export type LspStatusResponse = { 
/**
 * The workspace's root.
 */
workspace: string, 
/**
 * Its servers, by language.
 */
servers: Array<LspServerStatus>, };

export type WorkflowStatus = "running" | "completed" | "failed" | "stopped" | "interrupted";

export type WorkflowStepKind = "call" | "report";

export type WorkflowStep = { 
/**
 * The step's position, 0-based, in the order the script made the steps.
 */
index: number, 
/**
 * A call or a report section.
 */
kind: WorkflowStepKind, 
/**
 * For a call: the nested call's id (its card nests under the `workflow_run` card).
 */
callId?: string, 
/**
 * For a call: the tool's name.
 */
tool?: string, 
/**
 * For a call: `running`, `ok`, `error`, `denied` or `interrupted`.
 */
status?: string, 
/**
 * For a call, a short label (the agent's description, else the tool's name); for a
 * report section, its title.
 */
title: string, 
/**
 * For a report section: its Markdown.
 */
text?: string, 
/**
 * For a call: its result came from the call journal after a restart, not a new run.
 */
replayed?: boolean, 
/**
 * When the step was made (a call: when it started), RFC 3339 UTC.
 */
at: string, };

export type WorkflowRun = { 
/**
 * The run's id, unique in its session.
 */
runId: string, 
/**
 * The `workflow_run` call that started it: its calls nest under that call, and a run
 * resumed after a restart replays the journal kept under it.
 */
callId?: string, 
/**
 * The workflow's name: its file's name without `.py`.
 */
workflow: string, 
/**
 * The workflow's description, from its front matter.
 */
description?: string, 
/**
 * The arguments the run was given, defaults filled in.
 */
args: unknown, 
/**
 * Where it stands.
 */
status: WorkflowStatus, 
/**
 * It runs in the background: `workflow_run` returned at once, and the model is told
 * between its steps when the run ends.
 */
background?: boolean, 
/**
 * Its steps so far, by index.
 */
steps?: Array<WorkflowStep>, 
/**
 * The script's final value, when it completed.
 */
result?: unknown, 
/**
 * Why it failed, stopped or was interrupted.
 */
error?: string, 
/**
 * When it started, RFC 3339 UTC.
 */
startedAt: string, 
/**
 * When it ended, RFC 3339 UTC.
 */
endedAt?: string, 
/**
 * How long it ran, in milliseconds, once it ended.
 */
durationMs?: number, };

export type WorkflowStartedEvent = { 
/**
 * The run as it began (status running, no steps).
 */
run: WorkflowRun, };

export type WorkflowStepEvent = { 
/**
 * The run the step belongs to.
 */
runId: string, 
/**
 * The step as it is now.
 */
step: WorkflowStep, };

export type WorkflowFinishedEvent = { 
/**
 * The whole run as it ended.
 */
run: WorkflowRun, };

export type WorkflowRunOutput = { 
/**
 * The run: finished for a foreground `workflow_run`, running for a background one.
 */
run: WorkflowRun, };

export type WorkflowStatusOutput = { 
/**
 * The session's runs, oldest first (only the one asked for, when an id was given).
 */
runs: Array<WorkflowRun>, };

/** The most annotations one check run carries. */
export const MAX_CHECK_ANNOTATIONS = 50;

/** The most bytes of a call's output shown live from its start. */
export const LIVE_HEAD_BYTES = 262144;

/** The most bytes of a call's latest output shown live after its start. */
export const LIVE_TAIL_BYTES = 262144;

/** What a spill notice begins with, before the size. */
export const SPILL_NOTICE_OPEN = "[qilin: output cut; all ";

/** What stands between a spill notice's size and its path. */
export const SPILL_NOTICE_MIDDLE = " bytes saved to ";

/** What a spill notice ends with, after the path. */
export const SPILL_NOTICE_CLOSE = " - read that file for the rest]";
